// Quantizer quality against llama.cpp's reference quantizer: for every 2-D tensor of
// shared/fixtures/quants/source.f32.gguf and every type, our RMSE after a round trip must be
// at most 1.02 x the reference's recorded rmse_vs_source.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "model.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
namespace fs = std::filesystem;

TEST_CASE("quantizers are at least as accurate as llama.cpp's (RMSE ratio <= 1.02)", "[conformance][quant]") {
  const fs::path dir = fs::path(SY_SHARED_DIR) / "fixtures/quants";
  std::ifstream in(dir / "refs.json");
  const auto refs = nlohmann::json::parse(in);
  auto src = gguf::Model::open(dir / "source.f32.gguf");
  REQUIRE(src.has_value());
  const auto& tensors = src.value()->tensors();
  for (const auto& [recipe, entry] : refs.items()) {
    double worst = 0, sum_ratio = 0;
    int count = 0;
    for (const auto& [name, t] : entry["tensors"].items()) {
      const auto type = storage_type_from_name(t["type"].get<std::string>());
      REQUIRE(type.has_value());
      size_t idx = tensors.size();
      for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == name) idx = i;
      REQUIRE(idx < tensors.size());
      const auto n = static_cast<int64_t>(tensors[idx].elements());
      const auto* x = reinterpret_cast<const float*>(src.value()->view(idx).value().data());
      std::vector<uint8_t> q(*storage_row_bytes(*type, static_cast<uint64_t>(n)));
      std::vector<float> y(static_cast<size_t>(n));
      REQUIRE(quantize_row(*type, x, q.data(), n).is_ok());
      REQUIRE(dequantize_row(*type, q.data(), y.data(), n).is_ok());
      double se = 0;
      for (int64_t i = 0; i < n; ++i) se += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
      const double rmse = std::sqrt(se / static_cast<double>(n));
      const double ref = t["rmse_vs_source"].get<double>();
      const double ratio = ref > 0 ? rmse / ref : (rmse == 0 ? 1.0 : INFINITY);
      INFO(recipe << " " << name << ": rmse " << rmse << " vs reference " << ref << " (ratio " << ratio << ")");
      CHECK(ratio <= 1.02);
      worst = std::max(worst, ratio);
      sum_ratio += ratio;
      ++count;
    }
    std::printf("quantizer %-7s RMSE / llama.cpp: mean %.4f, worst %.4f over %d tensors\n", recipe.c_str(),
                sum_ratio / count, worst, count);
  }
}
