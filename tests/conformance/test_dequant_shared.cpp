// Reference dequantization against the independent values in shared/fixtures/quants
// (gguf-py's numpy dequantizers): every element must be bit-identical.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>

#include "model.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
namespace fs = std::filesystem;

TEST_CASE("dequantize_row is bit-identical to the reference values for every shipped type",
          "[conformance][quant]") {
  const fs::path dir = fs::path(SY_SHARED_DIR) / "fixtures/quants";
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    // <TYPE>.<tensor name>.f32
    const std::string fname = e.path().filename().string();
    if (e.path().extension() != ".f32") continue;
    const std::string type = fname.substr(0, fname.find('.'));
    const std::string tensor = fname.substr(type.size() + 1, fname.size() - type.size() - 1 - 4);
    INFO(fname);
    auto m = gguf::Model::open(dir / (type + ".gguf"));
    REQUIRE(m.has_value());
    const auto& ts = m.value()->tensors();
    size_t idx = ts.size();
    for (size_t i = 0; i < ts.size(); ++i)
      if (ts[i].name == tensor) idx = i;
    REQUIRE(idx < ts.size());
    const auto n = static_cast<int64_t>(ts[idx].elements());
    std::vector<float> got(static_cast<size_t>(n));
    REQUIRE(dequantize_row(ts[idx].type, m.value()->view(idx).value().data(), got.data(), n).is_ok());

    std::vector<float> want(static_cast<size_t>(n));
    std::ifstream in(e.path(), std::ios::binary);
    in.read(reinterpret_cast<char*>(want.data()), n * 4);
    REQUIRE(in.gcount() == n * 4);
    size_t diff = 0, first = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (std::memcmp(&got[i], &want[i], 4) != 0 && diff++ == 0) first = i;
    INFO("storage type " << storage_type_name(ts[idx].type) << ": " << diff << " differing elements, first at "
                         << first << " (" << got[first] << " vs " << want[first] << ")");
    CHECK(diff == 0);
    ++files;
  }
  CHECK(files == 28);  // 14 types x 2 tensors
}
