// Thread pool and matmul: threaded, tiled, SIMD results against the single-threaded scalar
// reference, for GEMV (m = 1) and GEMM shapes with odd sizes.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "matmul.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::cpu;

TEST_CASE("thread pool: every task runs exactly once, on a valid thread, run after run", "[cpu]") {
  ThreadPool pool(4);
  REQUIRE(pool.size() == 4);
  for (int round = 0; round < 50; ++round) {
    const int64_t n = 1 + round * 37;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<bool> bad_thread{false};
    pool.run(n, [&](int64_t t, int th) {
      hits[static_cast<size_t>(t)].fetch_add(1);
      if (th < 0 || th >= 4) bad_thread = true;
    });
    for (auto& h : hits) REQUIRE(h.load() == 1);
    REQUIRE_FALSE(bad_thread.load());
  }
  ThreadPool single(1);
  int count = 0;
  single.run(10, [&](int64_t, int) { ++count; });
  CHECK(count == 10);
}

TEST_CASE("matmul with every ISA and thread count equals the scalar reference", "[cpu]") {
  const StorageType types[] = {StorageType::F32, StorageType::F16, StorageType::BF16, StorageType::Q8_0,
                               StorageType::Q4_0, StorageType::Q4_1, StorageType::Q5_0, StorageType::Q5_1,
                               StorageType::IQ4_NL, StorageType::Q2_K, StorageType::Q3_K, StorageType::Q4_K,
                               StorageType::Q5_K, StorageType::Q6_K, StorageType::IQ4_XS};
  std::vector<Isa> isas{Isa::scalar};
  if (detect_isa() != Isa::scalar) isas.push_back(Isa::avx2);
  if (detect_isa() == Isa::avx512) isas.push_back(Isa::avx512);
  ThreadPool pool(3);
  std::mt19937 rng(42);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto t : types) {
    const int64_t bs = storage_type_info(t).block_size;
    const int64_t k = bs == 1 ? 77 : (bs == 256 ? 512 : 160);
    const int64_t rows = 37;
    std::vector<float> wf(static_cast<size_t>(rows * k));
    for (auto& v : wf) v = nd(rng);
    std::vector<uint8_t> w(*storage_row_bytes(t, static_cast<uint64_t>(k)) * rows);
    const size_t row_bytes = *storage_row_bytes(t, static_cast<uint64_t>(k));
    for (int64_t r = 0; r < rows; ++r) REQUIRE(quantize_row(t, wf.data() + r * k, w.data() + r * row_bytes, k).is_ok());
    for (int64_t m : {1, 5, 40}) {
      std::vector<float> x(static_cast<size_t>(m * k));
      for (auto& v : x) v = nd(rng);
      std::vector<float> ref(static_cast<size_t>(m * rows)), got(ref.size());
      MatmulArgs a{w.data(), t, k, rows, x.data(), m, ref.data()};
      REQUIRE(matmul_reference(a).is_ok());
      for (auto isa : isas) {
        INFO(storage_type_name(t) << " m=" << m << " isa=" << isa_name(isa));
        std::vector<uint8_t> scratch(matmul_scratch_bytes(t, k, m, isa));
        a.y = got.data();
        REQUIRE(matmul(a, isa, pool, scratch.data()).is_ok());
        double max_err = 0, max_mag = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
          max_err = std::max(max_err, static_cast<double>(std::fabs(got[i] - ref[i])));
          max_mag = std::max(max_mag, static_cast<double>(std::fabs(ref[i])));
        }
        CHECK(max_err <= 1e-4 * std::max(1.0, max_mag));
      }
    }
  }
}

TEST_CASE("matmul refuses a type without kernels and a ragged row", "[cpu]") {
  ThreadPool pool(1);
  float x[32] = {}, y[1];
  uint8_t w[64] = {};
  MatmulArgs a{w, StorageType::TQ1_0, 256, 1, x, 1, y};
  CHECK(matmul(a, Isa::scalar, pool, nullptr).message() == "cpu: no matmul kernel for weights of type TQ1_0");
  a.w_type = StorageType::Q8_0;
  a.k = 33;
  CHECK(matmul_reference(a).message() == "cpu: matmul row length 33 is not a multiple of Q8_0's block size");
}

#include "matmul_id.hpp"

TEST_CASE("matmul_id: expert-grouped results equal one reference matmul per pair", "[cpu]") {
  const int64_t k = 256, rows = 19, n_experts = 6, n_used = 2, n_tokens = 9;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(n_experts) - 1);
  for (auto t : {StorageType::Q4_K, StorageType::Q8_0, StorageType::F16}) {
    const size_t rb = *storage_row_bytes(t, k);
    std::vector<float> wf(static_cast<size_t>(k * rows * n_experts));
    for (auto& v : wf) v = nd(rng);
    std::vector<uint8_t> w(rb * static_cast<size_t>(rows * n_experts));
    for (int64_t r = 0; r < rows * n_experts; ++r) REQUIRE(quantize_row(t, wf.data() + r * k, w.data() + r * rb, k).is_ok());
    std::vector<int32_t> ids(static_cast<size_t>(n_used * n_tokens));
    for (auto& id : ids) id = pick(rng);
    ids[0] = ids[1] = 3;  // one token picking the same expert twice still works
    for (int64_t slots : {int64_t{1}, n_used}) {
      std::vector<float> x(static_cast<size_t>(k * slots * n_tokens));
      for (auto& v : x) v = nd(rng);
      std::vector<float> ref(static_cast<size_t>(rows * n_used * n_tokens)), got(ref.size());
      MatmulIdArgs a{w.data(), t, k, rows, n_experts, x.data(), slots, ids, n_used, n_tokens, ref.data()};
      REQUIRE(matmul_id_reference(a).is_ok());
      ThreadPool pool(2);
      a.y = got.data();
      REQUIRE(matmul_id(a, detect_isa(), pool).is_ok());
      for (size_t i = 0; i < ref.size(); ++i) REQUIRE(got[i] == Approx(ref[i]).margin(1e-4).epsilon(1e-4));
    }
    ids[5] = 6;
    MatmulIdArgs bad{w.data(), t, k, rows, n_experts, nullptr, 1, ids, n_used, n_tokens, nullptr};
    ThreadPool pool(1);
    CHECK(matmul_id(bad, Isa::scalar, pool).message() ==
          "cpu: matmul_id: token 2 slot 1 routes to expert 6, but there are 6");
  }
}
