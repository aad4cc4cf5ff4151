// Q4_K_X16, the 16-row interleaved Q4_K the loader repacks into for the CPU's VNNI kernels:
// the repack is a pure permutation (unpack_rows inverts it), and matmuls on repacked
// weights equal the row-major scalar reference on the original ones, for GEMV and GEMM,
// alone, as gate/up pairs and through matmul_id, with a token's result independent of its batch.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "matmul.hpp"
#include "matmul_close.hpp"
#include "matmul_id.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::cpu;

namespace {

constexpr StorageType kX16 = StorageType::Q4_K_X16;

std::vector<uint8_t> q4k_rows(int64_t rows, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> f(static_cast<size_t>(k));
  const size_t rb = *storage_row_bytes(StorageType::Q4_K, static_cast<uint64_t>(k));
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : f) v = nd(rng);
    REQUIRE(quantize_row(StorageType::Q4_K, f.data(), w.data() + static_cast<size_t>(r) * rb, k).is_ok());
  }
  return w;
}

std::vector<uint8_t> repacked(const std::vector<uint8_t>& w, int64_t k, int64_t rows) {
  std::vector<uint8_t> out(w.size());
  REQUIRE(repack_rows(kX16, w.data(), out.data(), k, rows).is_ok());
  return out;
}

// The kernels for the interleaved type this machine runs: the scalar reference always, the
// SIMD one where the CPU has it.
std::vector<Isa> x16_isas() {
  std::vector<Isa> isas{Isa::scalar};
  if (dot_kernel(kX16, detect_isa()).usable()) isas.push_back(detect_isa());
  return isas;
}

}  // namespace

TEST_CASE("Q4_K_X16: the repack is a permutation that unpack_rows inverts", "[cpu]") {
  std::mt19937 rng(11);
  const int64_t k = 512, rows = 32;
  const auto w = q4k_rows(rows, k, rng);
  const auto x = repacked(w, k, rows);
  CHECK(x != w);
  std::vector<uint8_t> back(w.size());
  REQUIRE(unpack_rows(kX16, x.data(), back.data(), k, rows).is_ok());
  CHECK(back == w);
  CHECK(interleave_rows(kX16) == 16);
  CHECK(interleave_base(kX16) == StorageType::Q4_K);
  CHECK(storage_row_bytes(kX16, 256) == storage_row_bytes(StorageType::Q4_K, 256));
  const auto st = repack_rows(kX16, w.data(), back.data(), k, 24);
  CHECK(st.message() == "Q4_K_X16 needs rows of whole super-blocks (256 elements) in groups of 16 rows");
  CHECK_FALSE(repack_rows(StorageType::Q4_K, w.data(), back.data(), k, rows).is_ok());
}

TEST_CASE("Q4_K_X16: matmul equals the row-major scalar reference, batch-independent", "[cpu]") {
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int64_t k = 768, rows = 48;
  const auto w = q4k_rows(rows, k, rng);
  const auto x16 = repacked(w, k, rows);
  ThreadPool pool(3);
  for (int64_t m : {1, 4, 7, 40}) {
    std::vector<float> x(static_cast<size_t>(m * k));
    for (auto& v : x) v = nd(rng);
    std::vector<float> ref(static_cast<size_t>(m * rows)), got(ref.size()), alone(static_cast<size_t>(rows));
    REQUIRE(matmul_reference({w.data(), StorageType::Q4_K, k, rows, x.data(), m, ref.data()}).is_ok());
    for (Isa isa : x16_isas()) {
      INFO("m=" << m << " isa=" << isa_name(isa));
      MatmulArgs a{x16.data(), kX16, k, rows, x.data(), m, got.data()};
      if (isa == Isa::scalar) {
        REQUIRE(matmul_reference(a).is_ok());
      } else {
        std::vector<uint8_t> scratch(matmul_scratch_bytes(kX16, k, m, isa));
        REQUIRE(matmul(a, isa, pool, scratch.data()).is_ok());
      }
      check_close(got, ref);
      if (isa == Isa::scalar) continue;
      // The last token alone gives the same bits as inside the batch.
      std::vector<uint8_t> scratch(matmul_scratch_bytes(kX16, k, 1, isa));
      MatmulArgs one{x16.data(), kX16, k, rows, x.data() + (m - 1) * k, 1, alone.data()};
      REQUIRE(matmul(one, isa, pool, scratch.data()).is_ok());
      for (int64_t r = 0; r < rows; ++r) CHECK(alone[static_cast<size_t>(r)] == got[static_cast<size_t>((m - 1) * rows + r)]);
    }
  }
}

TEST_CASE("Q4_K_X16: gate/up pairs with row-major Q6_K and matmul_id over experts", "[cpu]") {
  const Isa isa = detect_isa();
  if (!dot_kernel(kX16, isa).usable()) {
    WARN("no Q4_K_X16 kernel on this CPU (it needs AVX-512 VNNI): the SIMD cases are not run");
    return;
  }
  std::mt19937 rng(13);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int64_t k = 256, rows = 32, m = 5;
  ThreadPool pool(2);
  std::vector<float> x(static_cast<size_t>(m * k));
  for (auto& v : x) v = nd(rng);
  SECTION("gate/up: interleaved gate, row-major Q6_K up") {
    const auto wg = q4k_rows(rows, k, rng);
    const auto xg = repacked(wg, k, rows);
    std::vector<float> uf(static_cast<size_t>(rows * k));
    for (auto& v : uf) v = nd(rng);
    const size_t rb6 = *storage_row_bytes(StorageType::Q6_K, k);
    std::vector<uint8_t> wu(rb6 * rows);
    for (int64_t r = 0; r < rows; ++r) REQUIRE(quantize_row(StorageType::Q6_K, uf.data() + r * k, wu.data() + r * rb6, k).is_ok());
    REQUIRE(can_share_activations(kX16, StorageType::Q6_K, isa));
    std::vector<float> rg(static_cast<size_t>(m * rows)), ru(rg.size()), gg(rg.size()), gu(rg.size());
    REQUIRE(matmul_reference({wg.data(), StorageType::Q4_K, k, rows, x.data(), m, rg.data()}).is_ok());
    REQUIRE(matmul_reference({wu.data(), StorageType::Q6_K, k, rows, x.data(), m, ru.data()}).is_ok());
    std::vector<uint8_t> scratch(matmul_scratch_bytes(kX16, k, m, isa));
    REQUIRE(matmul_gate_up({xg.data(), kX16, k, rows, x.data(), m, gg.data()},
                           {wu.data(), StorageType::Q6_K, k, rows, x.data(), m, gu.data()}, Glu{}, isa, pool, scratch.data())
                .is_ok());
    check_close(gg, rg);
    check_close(gu, ru);
  }
  SECTION("matmul_id: each expert's rows are their own groups") {
    const int64_t n_experts = 3, n_used = 2;
    const auto w = q4k_rows(rows * n_experts, k, rng);
    const auto xw = repacked(w, k, rows * n_experts);
    const std::vector<int32_t> ids{2, 0, 1, 2, 0, 1, 1, 0, 2, 1};  // [n_used, m]
    std::vector<float> got(static_cast<size_t>(rows * n_used * m));
    MatmulIdArgs a;
    a.w = xw.data();
    a.w_type = kX16;
    a.k = k;
    a.rows = rows;
    a.n_experts = n_experts;
    a.x = x.data();
    a.x_slots = 1;
    a.ids = ids;
    a.n_used = n_used;
    a.n_tokens = m;
    a.y = got.data();
    MatmulIdScratch s;
    REQUIRE(matmul_id(a, isa, pool, s).is_ok());
    const size_t expert_bytes = *storage_row_bytes(StorageType::Q4_K, k) * rows;
    for (int64_t t = 0; t < m; ++t)
      for (int64_t j = 0; j < n_used; ++j) {
        const int32_t e = ids[static_cast<size_t>(t * n_used + j)];
        std::vector<float> ref(static_cast<size_t>(rows));
        REQUIRE(matmul_reference({w.data() + e * expert_bytes, StorageType::Q4_K, k, rows, x.data() + t * k, 1, ref.data()}).is_ok());
        std::vector<float> part(got.begin() + (t * n_used + j) * rows, got.begin() + (t * n_used + j + 1) * rows);
        check_close(part, ref);
      }
  }
}

TEST_CASE("Q4_K_X16: refused where no SIMD kernel reads it, and ragged groups are errors", "[cpu]") {
  CHECK_FALSE(dot_kernel(kX16, Isa::scalar).usable());
  CHECK_FALSE(dot_kernel(kX16, Isa::avx2).usable());
  CHECK(dot_kernel_scalar(kX16).usable());  // the reference, for tests
  float x[256] = {}, y[24] = {};
  std::vector<uint8_t> w(144 * 24);
  CHECK(matmul_reference({w.data(), kX16, 256, 24, x, 1, y}).message() ==
        "cpu: Q4_K_X16 weights come in groups of 16 rows, but the matrix has 24");
}
