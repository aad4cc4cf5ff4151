// The plugin search path never includes the current directory by accident.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "registry/search_path.hpp"

using namespace sy::registry;

TEST_CASE("SWITCHYARD_PLUGIN_PATH: empty and relative entries are ignored with a warning", "[registry]") {
  std::vector<std::string> w;
  auto dirs = parse_plugin_path_env("/opt/a::plugins:/opt/b:", w);
  REQUIRE(dirs.size() == 2);
  CHECK(dirs[0].path == "/opt/a");
  CHECK(dirs[1].path == "/opt/b");
  REQUIRE(w.size() == 3);
  CHECK(w[0] == "SWITCHYARD_PLUGIN_PATH has an empty entry; ignored (it would mean the current directory)");
  CHECK(w[1] ==
        "SWITCHYARD_PLUGIN_PATH entry 'plugins' is relative; ignored (use an absolute path so plugins never depend "
        "on the current directory)");
  w.clear();
  CHECK(parse_plugin_path_env("", w).empty());
  CHECK(w.empty());
}

TEST_CASE("the default search path: executable tree, install prefix, environment, pipeline", "[registry]") {
  ::setenv("SWITCHYARD_PLUGIN_PATH", "/opt/env-plugins", 1);
  std::vector<std::string> w;
  const auto exe_dir = executable_plugin_dir();
  auto dirs = default_search_path({"/opt/pipeline-plugins", exe_dir}, w);
  ::unsetenv("SWITCHYARD_PLUGIN_PATH");
  REQUIRE(dirs.size() == 4);  // the repeated executable directory is dropped
  CHECK(dirs[0].path == exe_dir);
  CHECK(dirs[0].origin == "next to the executable");
  CHECK(dirs[1].origin == "install prefix");
  CHECK(dirs[2].path == "/opt/env-plugins");
  CHECK(dirs[3].path == "/opt/pipeline-plugins");
  for (const auto& d : dirs) CHECK(d.path.is_absolute());
}
