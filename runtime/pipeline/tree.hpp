// A YAML document as a plain tree whose every node knows its file, line and column —
// kept through `extends:` merging and `--set` overrides, so an error in a base file or on
// the command line points at the right place.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/diagnostics.hpp"
#include "switchyard/status.hpp"

namespace sy::pipeline {

// Limits on what a pipeline document may hold, far above any real pipeline (a few
// hundred nodes): they bound the memory and time an input can cost (docs/pipelines.md).
inline constexpr size_t kMaxPipelineFileBytes = size_t{4} << 20;
inline constexpr size_t kMaxDocumentNodes = 10000;               ///< after expanding aliases
inline constexpr size_t kMaxDocumentScalarBytes = size_t{16} << 20;  ///< after expanding aliases
inline constexpr int kMaxDocumentDepth = 64;

struct Node {
  enum class Kind { null, scalar, list, map };
  Kind kind = Kind::null;
  std::string scalar;   ///< text of a scalar
  bool quoted = false;  ///< the scalar was quoted, so it is a string whatever it spells
  bool builtin = false; ///< made from Switchyard's defaults, not written by a user
  std::vector<Node> items;  ///< list items
  struct Entry;
  std::vector<Entry> entries;  ///< map entries, in document order
  Location loc;

  /// The entry with this key, or nullptr.
  [[nodiscard]] const Node* get(std::string_view key) const;
  [[nodiscard]] Node* get(std::string_view key);
  /// The location of the key itself for an entry, or of the map when absent.
  [[nodiscard]] Location key_location(std::string_view key) const;
  /// "a mapping", "a list", "a scalar", "nothing": for messages.
  [[nodiscard]] std::string describe() const;
};

struct Node::Entry {
  std::string key;
  Location key_loc;
  Node value;
};

/// Parses YAML text; `file` names it in locations. Syntax errors and duplicate keys
/// become diagnostics (and a null node).
Node parse_yaml(const std::string& text, const std::string& file, std::vector<Diagnostic>& diags);

/// Reads and parses a file; a missing file is a diagnostic at `from`.
Node load_yaml_file(const std::filesystem::path& path, const Location& from, std::vector<Diagnostic>& diags);

/// Reads a pipeline file's text; the default is util::read_file with kMaxPipelineFileBytes.
/// Tests and the fuzz target give an in-memory one.
using TextReader = std::function<Result<std::string>(const std::filesystem::path&)>;

/// Loads a pipeline file and resolves `extends:` chains (paths relative to the file that
/// names them; cycles are errors). Maps merge key by key; lists and scalars replace.
Node load_with_extends(const std::filesystem::path& path, std::vector<Diagnostic>& diags);
Node load_with_extends(const std::filesystem::path& path, std::vector<Diagnostic>& diags, const TextReader& read);

/// The name of a sampler's main parameter (the one `{ top_p: 0.9 }` sets), nullopt when it
/// has none or is unknown.
using PrimaryParam = std::function<std::optional<std::string>(std::string_view sampler)>;

/// Applies one `key.path=value` override (value parsed as YAML; list items addressed as
/// `backends.0.threads`, `backends[0].threads` or by name, `backends.cpu.threads`,
/// `sampling.top_p.p`). Missing maps on the path are created; shorthand forms on the path
/// (`model: file.gguf`, `- cpu`, `- dist`, `{ top_p: 0.9 }`) are expanded first, the last
/// through `primary`.
void apply_set(Node& root, const std::string& assignment, std::vector<Diagnostic>& diags, const PrimaryParam& primary);
void apply_set(Node& root, const std::string& assignment, std::vector<Diagnostic>& diags);

/// The name a list item is addressed by in `--set`: a scalar's text (`- cpu`, `- dist`),
/// a backend's `plugin`, or a sampler mapping's one key; "" otherwise.
std::string item_name(const Node& item);

/// A scalar list item made a mapping so a key can be set inside it: `- cpu` in `backends`
/// becomes `{ plugin: cpu }`, `- dist` in `sampling` becomes `{ dist: null }`. `walked`
/// names the item in the error for another section.
Status expand_item(Node& item, const std::string& section, const std::string& walked);

/// A sampler's shorthand value made a mapping of its main parameter: the `0.9` of
/// `{ top_p: 0.9 }` becomes `{ p: 0.9 }`; an error (naming `walked`) when it has none.
Status expand_primary(Node& value, const std::string& sampler, const std::string& walked, const PrimaryParam& primary);

/// `model: file.gguf` becomes `model: { path: file.gguf }` (positions kept), so keys can
/// be set or merged inside it.
void expand_model_shorthand(Node& root);

/// Deep merge: `over` wins; maps merge recursively.
void merge_into(Node& base, const Node& over);

}  // namespace sy::pipeline
