// Where plugins are looked for. Only configured directories: the executable's own tree,
// the install prefix, SWITCHYARD_PLUGIN_PATH and a pipeline's plugin_path; never the
// current directory by accident (empty or relative environment entries are refused).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sy::registry {

/// One directory to scan, with a label saying why it is searched.
struct SearchDir {
  std::filesystem::path path;
  std::string origin;  ///< "next to the executable", "install prefix", "SWITCHYARD_PLUGIN_PATH", "pipeline plugin_path"
};

/// Builds the search path in priority order (earlier directories win a name clash):
/// executable tree, install prefix, SWITCHYARD_PLUGIN_PATH, then `extra` (a pipeline's
/// plugin_path, already made absolute). Duplicates (same canonical path) are dropped.
/// `warnings` receives one sentence per ignored environment entry.
std::vector<SearchDir> default_search_path(const std::vector<std::filesystem::path>& extra,
                                           std::vector<std::string>& warnings);

/// Parses a colon-separated SWITCHYARD_PLUGIN_PATH value; empty and relative entries are
/// skipped with a warning.
std::vector<SearchDir> parse_plugin_path_env(const std::string& value, std::vector<std::string>& warnings);

/// The plugin directory next to the running executable: <exe>/../lib/switchyard/plugins.
std::filesystem::path executable_plugin_dir();

}  // namespace sy::registry
