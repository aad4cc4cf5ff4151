// Importance matrices and weighted quantization (runtime/quantize/imatrix, the SDK's
// quantize_row_weighted): the collector's sums and counts against sums made here, the file
// round trip and its refusals, and the weighted quantizers: weights of 1 are the plain
// quantizer bit for bit, and skewed weights lower the weighted error they are asked to lower.
#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>
#include <random>

#include "quantize/imatrix.hpp"
#include "quantize/quantize.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"
#include "writer.hpp"

namespace imatrix_test {

namespace qt = sy::quant_tool;
using sy::StorageType;

const StorageType kWeighted[] = {StorageType::Q4_0, StorageType::Q4_1, StorageType::Q5_0, StorageType::Q5_1,
                                 StorageType::Q8_0, StorageType::Q2_K, StorageType::Q3_K, StorageType::Q4_K,
                                 StorageType::Q5_K, StorageType::Q6_K, StorageType::IQ4_NL, StorageType::IQ4_XS};

double weighted_error(StorageType t, const std::vector<float>& x, const std::vector<float>& w,
                      const std::vector<std::byte>& q) {
  std::vector<float> y(x.size());
  REQUIRE(sy::dequantize_row(t, q.data(), y.data(), static_cast<int64_t>(x.size())).is_ok());
  double e = 0;
  for (size_t i = 0; i < x.size(); ++i) e += static_cast<double>(w[i]) * (x[i] - y[i]) * (x[i] - y[i]);
  return e;
}

}  // namespace imatrix_test

using namespace imatrix_test;

TEST_CASE("weighted quantization: weights of 1 are the plain quantizer bit for bit", "[imatrix]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int64_t n = 512;
  std::vector<float> x(n), ones(n, 1.0f);
  for (auto& v : x) v = nd(rng);
  for (StorageType t : kWeighted) {
    INFO(sy::storage_type_name(t));
    REQUIRE(sy::can_quantize_weighted(t));
    const auto bytes = *sy::storage_row_bytes(t, n);
    std::vector<std::byte> a(bytes), b(bytes);
    REQUIRE(sy::quantize_row(t, x.data(), a.data(), n).is_ok());
    REQUIRE(sy::quantize_row_weighted(t, x.data(), b.data(), n, ones.data()).is_ok());
    CHECK(a == b);
  }
  CHECK(!sy::can_quantize_weighted(StorageType::F16));
  std::vector<std::byte> out(1024);
  CHECK(!sy::quantize_row_weighted(StorageType::F16, x.data(), out.data(), 32, ones.data()));
}

TEST_CASE("weighted quantization: skewed weights lower the weighted error", "[imatrix]") {
  // Columns whose activations are large matter more: weights spread over three orders of
  // magnitude, as real importance matrices are. Summed over 64 rows, every type's weighted
  // error must fall below the unweighted quantizer's.
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int64_t n = 256, rows = 64;
  std::vector<float> w(n);
  for (auto& v : w) v = std::exp(2.0f * nd(rng));
  for (StorageType t : kWeighted) {
    INFO(sy::storage_type_name(t));
    const auto bytes = *sy::storage_row_bytes(t, n);
    double plain = 0, weighted = 0;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> x(n);
      for (auto& v : x) v = nd(rng);
      std::vector<std::byte> a(bytes), b(bytes);
      REQUIRE(sy::quantize_row(t, x.data(), a.data(), n).is_ok());
      REQUIRE(sy::quantize_row_weighted(t, x.data(), b.data(), n, w.data()).is_ok());
      plain += weighted_error(t, x, w, a);
      weighted += weighted_error(t, x, w, b);
    }
    std::cout << sy::storage_type_name(t) << ": weighted error " << weighted / plain << " of the plain quantizer's\n";
    CHECK(weighted < plain);
  }
}

TEST_CASE("imatrix: the collector sums squared inputs per column and counts rows", "[imatrix]") {
  qt::ImatrixCollector c;
  // A plain matrix: 16 rows (the least a step must have) of 2 columns, row r = (r, -1).
  std::vector<float> x;
  for (int r = 0; r < 16; ++r) x.insert(x.end(), {static_cast<float>(r), -1.f});
  REQUIRE(c.add({"blk.0.attn_q.weight", 2, 16, x, {}, 0}).is_ok());
  REQUIRE(c.add({"blk.0.attn_q.weight", 2, 16, x, {}, 0}).is_ok());
  const auto& e = c.result().entries.at("blk.0.attn_q.weight");
  REQUIRE(e.n_mat() == 1);
  CHECK(e.counts[0] == 32);
  CHECK(e.sum2[0] == 2 * 1240.0);  // 2 x (0^2 + ... + 15^2)
  CHECK(e.sum2[1] == 32.0);
  CHECK(e.importance(0) == std::vector<float>{2480.f / 32, 1.f});
  // Fewer than 16 rows: a generation step, not collected; names outside blk.* neither.
  REQUIRE(c.add({"blk.0.attn_k.weight", 2, 4, std::span(x).first(8), {}, 0}).is_ok());
  REQUIRE(c.add({"output.weight", 2, 16, x, {}, 0}).is_ok());
  CHECK(c.result().entries.size() == 1);
  // A stack of 3 experts: rows go to the expert their id names, at any batch size.
  const std::vector<float> ex{1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> ids{2, 0, 2};
  REQUIRE(c.add({"blk.0.ffn_down_exps.weight", 2, 3, ex, ids, 3}).is_ok());
  const auto& m = c.result().entries.at("blk.0.ffn_down_exps.weight");
  CHECK(m.counts == std::vector<double>{1, 0, 2});
  CHECK(m.sum2 == std::vector<double>{9, 16, 0, 0, 1 + 25, 4 + 36});
  CHECK(m.importance(1).empty());  // an expert no token chose
  const float bad[32] = {NAN};
  CHECK_THAT(c.add({"blk.1.attn_q.weight", 2, 16, bad, {}, 0}).message(), Catch::Contains("non-finite"));
}

TEST_CASE("imatrix: the file round trip, and what is refused", "[imatrix]") {
  sy::test::TempDir tmp;
  qt::Imatrix m;
  m.datasets = {"text.txt"};
  m.chunk_count = 3;
  m.chunk_size = 128;
  m.entries["blk.0.attn_q.weight"] = {2, {5, 7}, {4}};
  m.entries["blk.0.ffn_up_exps.weight"] = {2, {1, 2, 3, 4}, {1, 2}};
  REQUIRE(qt::write_imatrix(m, tmp / "m.gguf").is_ok());
  auto r = qt::read_imatrix(tmp / "m.gguf");
  INFO(r.status().message());
  REQUIRE(r);
  CHECK(r->datasets == m.datasets);
  CHECK(r->chunk_count == 3);
  CHECK(r->chunk_size == 128);
  REQUIRE(r->entries.size() == 2);
  CHECK(r->entries.at("blk.0.ffn_up_exps.weight").sum2 == std::vector<double>{1, 2, 3, 4});
  CHECK(r->entries.at("blk.0.ffn_up_exps.weight").counts == std::vector<double>{1, 2});

  // The weights quantize takes from an entry: mean 1 per expert, floored, 1 where unused.
  sy::TensorDesc t;
  t.name = "blk.0.ffn_up_exps.weight";
  t.shape = {2, 5, 2};
  auto w = qt::importance_weights(t, r->entries.at(t.name));
  REQUIRE(w);
  // Expert 0: importance {1, 2}, mean 1.5; expert 1: {3/2, 4/2}, mean 1.75.
  CHECK(*w == std::vector<float>{1.f / 1.5f, 2.f / 1.5f, 1.5f / 1.75f, 2.f / 1.75f});
  t.shape = {2, 5, 3};
  CHECK_THAT(qt::importance_weights(t, r->entries.at(t.name)).status().message(), Catch::Contains("made for another model"));

  sy::gguf::Writer model;
  model.add("general.architecture", sy::MetaValue(std::string("llama")));
  REQUIRE(model.write(tmp / "model.gguf").is_ok());
  auto not_imatrix = qt::read_imatrix(tmp / "model.gguf");
  REQUIRE(!not_imatrix);
  CHECK_THAT(not_imatrix.status().message(), Catch::Contains("is not an importance matrix"));
}
