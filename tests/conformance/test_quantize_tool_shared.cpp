// `switchyard quantize` (runtime/quantize) against llama-quantize's own files:
//  - --pure with every recipe of shared/fixtures/quants gives each tensor llama.cpp's type,
//    with an RMSE against the F32 source at most 1.02 x llama.cpp's recorded one;
//  - the named recipes (Q4_K_M, Q6_K, Q8_0) choose, tensor by tensor, the types llama.cpp
//    chose for the shared fixtures: a dense llama from its F16 file, and a hybrid MoE
//    (qwen35moe) requantized from its Q8_0 file (the rules read names, shapes and metadata
//    only, so the source's type does not change the choice).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "model.hpp"
#include "quantize/quantize.hpp"
#include "switchyard/quant.hpp"

namespace quantize_tool_test {

namespace fs = std::filesystem;
namespace qt = sy::quant_tool;

struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("sy-quantize-tool-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::map<std::string, sy::StorageType> types_of(const fs::path& file) {
  auto m = sy::gguf::Model::open(file);
  REQUIRE(m);
  std::map<std::string, sy::StorageType> out;
  for (const auto& t : (*m)->tensors()) out[t.name] = t.type;
  return out;
}

void quantize(const fs::path& in, const fs::path& out, const std::string& recipe, bool pure, bool requantize) {
  qt::QuantizeOptions o;
  auto r = qt::parse_recipe(recipe);
  REQUIRE(r);
  o.recipe = *r;
  o.types.pure = pure;
  o.allow_requantize = requantize;
  o.threads = 2;
  auto sum = qt::quantize_model(in, out, o);
  INFO(sum.status().message());
  REQUIRE(sum);
}

}  // namespace quantize_tool_test

using namespace quantize_tool_test;

TEST_CASE("quantize --pure: llama.cpp's types, RMSE at most 1.02 x llama-quantize's", "[conformance][quantize]") {
  const fs::path dir = fs::path(SY_SHARED_DIR) / "fixtures/quants";
  std::ifstream in(dir / "refs.json");
  const auto refs = nlohmann::json::parse(in);
  auto src = sy::gguf::Model::open(dir / "source.f32.gguf");
  REQUIRE(src);
  TempDir tmp;
  for (const auto& [recipe, entry] : refs.items()) {
    const fs::path out = tmp.path / (recipe + ".gguf");
    quantize(dir / "source.f32.gguf", out, recipe, true, false);
    auto q = sy::gguf::Model::open(out);
    REQUIRE(q);
    for (const auto& [name, t] : entry["tensors"].items()) {
      INFO(recipe << " " << name);
      size_t is = 0, iq = 0;
      for (size_t i = 0; i < (*src)->tensors().size(); ++i)
        if ((*src)->tensors()[i].name == name) is = i;
      for (size_t i = 0; i < (*q)->tensors().size(); ++i)
        if ((*q)->tensors()[i].name == name) iq = i;
      const auto& qd = (*q)->tensors()[iq];
      REQUIRE(qd.name == name);
      CHECK(sy::storage_type_name(qd.type) == t["type"].get<std::string>());
      const auto n = static_cast<int64_t>(qd.elements());
      const auto* x = reinterpret_cast<const float*>((*src)->view(is).value().data());
      std::vector<float> y(static_cast<size_t>(n));
      REQUIRE(sy::dequantize_row(qd.type, (*q)->view(iq).value().data(), y.data(), n));
      double se = 0;
      for (int64_t i = 0; i < n; ++i) se += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
      const double rmse = std::sqrt(se / static_cast<double>(n)), ref = t["rmse_vs_source"].get<double>();
      INFO("rmse " << rmse << " vs llama-quantize " << ref);
      CHECK(rmse <= 1.02 * ref + 1e-12);
    }
  }
}

TEST_CASE("quantize recipes choose llama-quantize's type for every tensor", "[conformance][quantize]") {
  const fs::path fx = fs::path(SY_SHARED_DIR) / "fixtures";
  TempDir tmp;
  for (const char* recipe : {"q4_k_m", "q6_k", "q8_0"}) {
    INFO("llama-e256 " << recipe);
    const fs::path out = tmp.path / (std::string("llama-") + recipe + ".gguf");
    quantize(fx / "llama-e256-f16.gguf", out, recipe, false, false);
    CHECK(types_of(out) == types_of(fx / ("llama-e256-" + std::string(recipe) + ".gguf")));
  }
  for (const char* recipe : {"q4_k_m", "q6_k"}) {
    INFO("qwen35moe-e256 " << recipe);
    const fs::path out = tmp.path / (std::string("qwen35moe-") + recipe + ".gguf");
    quantize(fx / "qwen35moe-e256-q8_0.gguf", out, recipe, false, true);
    CHECK(types_of(out) == types_of(fx / ("qwen35moe-e256-" + std::string(recipe) + ".gguf")));
  }
}

TEST_CASE("quantize refuses to requantize without being asked", "[conformance][quantize]") {
  const fs::path fx = fs::path(SY_SHARED_DIR) / "fixtures";
  TempDir tmp;
  qt::QuantizeOptions o;
  auto r = qt::parse_recipe("q4_k_m");
  REQUIRE(r);
  o.recipe = *r;
  auto sum = qt::quantize_model(fx / "qwen35moe-e256-q8_0.gguf", tmp.path / "x.gguf", o);
  REQUIRE_FALSE(sum);
  CHECK_THAT(sum.status().message(), Catch::Contains("already Q8_0") && Catch::Contains("--allow-requantize"));
  CHECK_FALSE(fs::exists(tmp.path / "x.gguf"));
}
