// Typed reads of located YAML nodes that turn every mismatch into a diagnostic naming
// the key path, the expected type or range, and a did-you-mean where one is plausible.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/tree.hpp"
#include "switchyard/params.hpp"

namespace sy::pipeline {

class Checker {
 public:
  using Locations = std::map<std::string, Location, std::less<>>;

  explicit Checker(std::vector<Diagnostic>& diags) : diags_(diags) {}

  /// From now on every typed read records where its key path was written into `locs`
  /// (Pipeline::locations); nullptr stops recording.
  void track(Locations* locs) { locs_ = locs; }
  /// Records one key path read outside the typed reads (a shorthand, a synthesized key).
  void seen(const std::string& path, const Location& loc) {
    if (locs_) (*locs_)[path] = loc;
  }

  void error(const Location& loc, std::string message) { diags_.push_back({loc, std::move(message), false}); }
  void warn(const Location& loc, std::string message) { diags_.push_back({loc, std::move(message), true}); }

  /// Reports every key of `map` not in `allowed`, suggesting the closest one.
  /// `section` is the key path for the message ("context"), empty for the top level.
  void check_keys(const Node& map, const std::string& section, const std::vector<std::string>& allowed);
  /// Reports a missing required key at the map's location.
  void require(const Node& map, const std::string& section, const std::string& key);

  /// True for a mapping; otherwise reports "'path' must be a mapping".
  bool is_map(const Node& n, const std::string& path, const std::string& example = "");
  /// True for a list; otherwise reports "'path' must be a list".
  bool is_list(const Node& n, const std::string& path, const std::string& example = "");

  std::optional<bool> boolean(const Node& n, const std::string& path);
  /// An integer within [min, max]; `keywords` lists strings accepted instead (returned
  /// through `keyword`).
  std::optional<int64_t> integer(const Node& n, const std::string& path, std::optional<double> min,
                                 std::optional<double> max, const std::vector<std::string>& keywords = {},
                                 std::string* keyword = nullptr);
  std::optional<double> number(const Node& n, const std::string& path, std::optional<double> min,
                               std::optional<double> max, bool min_exclusive = false);
  /// Any scalar as text.
  std::optional<std::string> string(const Node& n, const std::string& path);
  /// A file path: a scalar that YAML does not read as a number, boolean or null unless
  /// quoted. `expected` completes "'path' must be ..." ("a path", "a path or a mapping like
  /// { path: ... }").
  std::optional<std::string> path_text(const Node& n, const std::string& path, const std::string& expected = "a path");
  /// One of `choices`, with a did-you-mean.
  std::optional<std::string> choice(const Node& n, const std::string& path, const std::vector<std::string>& choices);

  /// A plugin parameter of any declared type.
  std::optional<ParamValue> param(const ParamSpec& spec, const Node& n, const std::string& path);

 private:
  // True when `value` matches the spec's pattern in full (or there is none); otherwise
  // reports it with the spec's hint.
  bool string_matches(const ParamSpec& spec, const Node& n, const std::string& value, const std::string& path);

  std::vector<Diagnostic>& diags_;
  Locations* locs_ = nullptr;
};

/// "between 1 and 8", "at least 1", "at most 8" for messages.
std::string range_phrase(std::optional<double> min, std::optional<double> max, bool min_exclusive = false);
/// A number as a person writes it: 8192, 0.95.
std::string number_text(double v);

}  // namespace sy::pipeline
