// Pipeline validation against the core schema and each plugin component's parameter
// schema (read from manifests, so nothing is loaded).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "pipeline/tree.hpp"

namespace sy::registry {
class Registry;
}

namespace sy::pipeline {

/// The top-level keys of a pipeline and, for each section, its keys (for docs and tests).
const std::vector<std::string>& top_level_keys();

/// Plugin directories named by the document's `plugin_path` (absolute; relative entries
/// are resolved against the file that names them).
std::vector<std::filesystem::path> plugin_dirs(const Node& root, std::vector<Diagnostic>& diags);

/// What validate() may leave out.
struct ValidateOptions {
  /// The model file (or directory) must exist and be readable. `plan --topology` plans a
  /// model's shape rather than a file, so it can turn this off for a pipeline whose model
  /// is on another machine.
  bool model_file = true;
};

/// Validates a merged document; appends diagnostics; the returned pipeline is meaningful
/// only when no error was added.
Pipeline validate(const Node& root, const registry::Registry& reg, std::vector<Diagnostic>& diags,
                  const ValidateOptions& opts = {});

/// Everything `switchyard validate` does for one file: load with extends, apply the
/// overrides, build the registry from the default search path plus plugin_path, validate.
struct LoadResult {
  Pipeline pipeline;
  std::vector<Diagnostic> diagnostics;
  [[nodiscard]] bool ok() const { return !has_errors(diagnostics); }
};
LoadResult load_pipeline(const std::filesystem::path& file, const std::vector<std::string>& overrides);

/// Same, with a caller-provided registry factory input: the search path to use before
/// plugin_path is appended (tests pass an isolated one).
LoadResult load_pipeline(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                         const std::vector<std::filesystem::path>* fixed_search_dirs, const ValidateOptions& opts = {});

/// Why a placement-override regular expression would cost too much to compile (too long,
/// nested too deep, counted repetitions too large), as the end of a sentence; nullopt when
/// it is fine.
std::optional<std::string> pattern_too_costly(const std::string& pattern);

/// Parses "24GiB", "512MiB", "1.5GB", "4096" into bytes; nullopt when malformed.
std::optional<uint64_t> parse_size(std::string_view text);

/// Parses a percentage below 100 ("10%") or a size ("2GiB"); nullopt when malformed.
std::optional<MemoryAmount> parse_amount(std::string_view text);

}  // namespace sy::pipeline
