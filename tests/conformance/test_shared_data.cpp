// The shared reference data is where the suite expects it, and is what it claims to be.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {
uint32_t read_u32(std::ifstream& in) {
  unsigned char b[4] = {};
  in.read(reinterpret_cast<char*>(b), 4);
  return b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
}
}  // namespace

TEST_CASE("every .gguf under the shared folder starts with the GGUF magic and a known version", "[conformance]") {
  const fs::path shared = SY_SHARED_DIR;
  size_t n = 0;
  for (const auto& sub : {"models", "fixtures", "vocab"}) {
    if (!fs::is_directory(shared / sub)) continue;
    for (const auto& e : fs::recursive_directory_iterator(shared / sub)) {
      if (e.path().extension() != ".gguf") continue;
      std::ifstream in(e.path(), std::ios::binary);
      char magic[4] = {};
      in.read(magic, 4);
      INFO(e.path().string());
      CHECK(std::string(magic, 4) == "GGUF");
      const uint32_t version = read_u32(in);
      CHECK((version == 2 || version == 3));
      ++n;
    }
  }
  CHECK(fs::exists(shared / "models" / "stories260K.gguf"));
  CHECK(n > 10);
}

TEST_CASE("the shipped demo pipeline points at the shared stories260K model", "[conformance]") {
  // configs/demo.yaml names ../../shared/models/stories260K.gguf relative to itself.
  const fs::path model = fs::path(SY_SOURCE_DIR) / "configs" / "../../shared/models/stories260K.gguf";
  if (fs::weakly_canonical(fs::path(SY_SHARED_DIR)) != fs::weakly_canonical(fs::path(SY_SOURCE_DIR) / "../shared")) {
    WARN("SWITCHYARD_SHARED_DIR is not the default ../shared; the demo's relative path is not checked");
    return;
  }
  CHECK(fs::exists(model));
}
