#include "registry/search_path.hpp"

#include <cstdlib>
#include <set>

#ifndef SY_INSTALL_PLUGIN_DIR
#define SY_INSTALL_PLUGIN_DIR "/usr/local/lib/switchyard/plugins"
#endif

namespace sy::registry {
namespace fs = std::filesystem;

fs::path executable_plugin_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (exe.parent_path().parent_path() / "lib" / "switchyard" / "plugins").lexically_normal();
}

std::vector<SearchDir> parse_plugin_path_env(const std::string& value, std::vector<std::string>& warnings) {
  std::vector<SearchDir> dirs;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t end = std::min(value.find(':', start), value.size());
    const std::string entry = value.substr(start, end - start);
    if (entry.empty()) {
      if (!value.empty())
        warnings.emplace_back("SWITCHYARD_PLUGIN_PATH has an empty entry; ignored (it would mean the current directory)");
    } else if (fs::path(entry).is_relative()) {
      warnings.push_back("SWITCHYARD_PLUGIN_PATH entry '" + entry +
                         "' is relative; ignored (use an absolute path so plugins never depend on the current directory)");
    } else {
      dirs.push_back({fs::path(entry).lexically_normal(), "SWITCHYARD_PLUGIN_PATH"});
    }
    start = end + 1;
  }
  return dirs;
}

std::vector<SearchDir> default_search_path(const std::vector<fs::path>& extra, std::vector<std::string>& warnings) {
  std::vector<SearchDir> all;
  if (auto d = executable_plugin_dir(); !d.empty()) all.push_back({d, "next to the executable"});
  all.push_back({fs::path(SY_INSTALL_PLUGIN_DIR), "install prefix"});
  if (const char* env = std::getenv("SWITCHYARD_PLUGIN_PATH"))
    for (auto& d : parse_plugin_path_env(env, warnings)) all.push_back(std::move(d));
  for (const auto& e : extra) all.push_back({e, "pipeline plugin_path"});

  std::vector<SearchDir> out;
  std::set<fs::path> seen;
  for (auto& d : all) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(d.path, ec);
    if (ec) key = d.path;
    if (seen.insert(key).second) out.push_back(std::move(d));
  }
  return out;
}

}  // namespace sy::registry
