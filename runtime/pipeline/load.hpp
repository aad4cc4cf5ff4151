// Loading a pipeline the way commands do: the file (or built-in text) with its `extends`
// chain, then `--set` overrides, then command-line flags as edits of the tree, then
// validation against the installed plugins. Each step keeps positions, so a message points
// at the file, the --set or the flag that wrote the value.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/validate.hpp"

namespace sy::pipeline {

/// A change to the document after `--set` and before validation; it may read component
/// manifests (a sampler's main parameter, whether it picks the token) from `reg`.
using TreeEdit = std::function<void(Node& root, const registry::Registry& reg, std::vector<Diagnostic>& diags)>;

struct LoadOptions {
  std::vector<std::string> sets;  ///< `key.path=value`, applied in order
  TreeEdit edit;                  ///< optional, applied after `sets`
  /// The plugin search path to use before `plugin_path` (tests pass an isolated one);
  /// nullptr: the default search path.
  const std::vector<std::filesystem::path>* fixed_search_dirs = nullptr;
  ValidateOptions validate;
};

/// Loads, overrides, edits and validates the pipeline file `file`.
LoadResult load_pipeline_file(const std::filesystem::path& file, const LoadOptions& opts);

/// The same for a pipeline given as text (a built-in default); `name` stands for the file
/// in messages.
LoadResult load_pipeline_from_text(const std::string& text, const std::string& name, const LoadOptions& opts);

/// The name of a sampler's main parameter per its manifest (`p` for top_p), nullopt when
/// it has none or is not installed.
std::optional<std::string> primary_param(const registry::Registry& reg, std::string_view sampler);

/// The registry a document's plugins are checked against: the given or default search path,
/// then the document's `plugin_path`. Search-path warnings are added to `diags`.
std::unique_ptr<registry::Registry> registry_for(const Node& root, const std::string& file,
                                                 const std::vector<std::filesystem::path>* fixed_search_dirs,
                                                 std::vector<Diagnostic>& diags);

}  // namespace sy::pipeline
