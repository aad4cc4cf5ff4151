// switchyard-manifest LIBRARY OUTPUT.json
// Run by the build after linking a plugin: loads the library, reads its descriptor and
// writes the manifest from it, so the manifest can never be written by hand out of sync.
#include <cstdio>

#include "registry/library.hpp"
#include "registry/manifest.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: switchyard-manifest PLUGIN_LIBRARY OUTPUT.json\n");
    return 2;
  }
  const std::filesystem::path lib = std::filesystem::absolute(argv[1]);
  auto loaded = sy::registry::Library::open(lib);
  if (!loaded) {
    std::fprintf(stderr, "switchyard-manifest: %s\n", loaded.status().message().c_str());
    return 1;
  }
  const auto m = sy::registry::manifest_from_descriptor(loaded.value()->descriptor(), lib.filename().string(), loaded.value()->storage_types());
  if (auto st = sy::registry::write_manifest(m, argv[2]); !st) {
    std::fprintf(stderr, "switchyard-manifest: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}
