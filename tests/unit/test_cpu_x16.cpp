// The 16-row interleaved layouts the loader repacks Q4_K, Q6_K, Q4_0, Q8_0 and I4_G* (AWQ, GPTQ)
// into for the CPU's SIMD kernels: the repack is a pure permutation (unpack_rows inverts
// it), and matmuls on repacked weights equal the row-major scalar reference on the original
// ones, for GEMV and GEMM, alone, as gate/up pairs and through matmul_id, with a token's
// result independent of its batch and of the ISA that computed it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "kernel_sets.hpp"
#include "matmul.hpp"
#include "matmul_close.hpp"
#include "matmul_id.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::cpu;

namespace {

constexpr StorageType kX16 = StorageType::Q4_K_X16;
constexpr StorageType kAllX16[] = {StorageType::Q4_K_X16,   StorageType::Q6_K_X16,   StorageType::Q4_0_X16,
                                   StorageType::Q8_0_X16,   StorageType::I4_G32_X16, StorageType::I4_G64_X16,
                                   StorageType::I4_G128_X16};

// Grouped 4-bit rows (I4_G* has no quantizer: format plugins decode checkpoints into it):
// random codes, scales of either sign, zero points mostly the integers checkpoints use and
// some that are not integers (the kernels must not rely on it).
std::vector<uint8_t> grouped_rows(StorageType base, std::vector<uint8_t> w, std::mt19937& rng) {
  const size_t bb = storage_type_info(base).block_bytes;
  std::uniform_real_distribution<float> mag(0.002f, 0.05f);
  const auto put16 = [](uint8_t* p, float v) {
    const uint16_t h = fp32_to_fp16(v);
    std::memcpy(p, &h, 2);
  };
  for (size_t off = 0; off < w.size(); off += bb) {
    const int zi = static_cast<int>(rng() % 16), kind = static_cast<int>(rng() % 4);
    const float z = kind == 0 ? 8.0f : kind == 1 ? static_cast<float>(zi) : kind == 2 ? zi + 0.5f : zi * 0.75f;
    put16(w.data() + off, mag(rng) * (rng() % 3 == 0 ? -1.f : 1.f));
    put16(w.data() + off + 2, z);
    for (size_t j = 4; j < bb; ++j) w[off + j] = static_cast<uint8_t>(rng());
  }
  return w;
}

std::vector<uint8_t> base_rows(StorageType base, int64_t rows, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> f(static_cast<size_t>(k));
  const size_t rb = *storage_row_bytes(base, static_cast<uint64_t>(k));
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
  if (!can_quantize(base)) return grouped_rows(base, std::move(w), rng);
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : f) v = nd(rng);
    REQUIRE(quantize_row(base, f.data(), w.data() + static_cast<size_t>(r) * rb, k).is_ok());
  }
  return w;
}

std::vector<uint8_t> q4k_rows(int64_t rows, int64_t k, std::mt19937& rng) { return base_rows(StorageType::Q4_K, rows, k, rng); }

// The layouts the AVX2 kernels read (I4_G*_X16 only AVX-512 VNNI does).
bool offered(StorageType xt, Isa isa) {
  const StorageType base = interleave_base(xt);
  return isa == Isa::avx512 || base == StorageType::Q4_K || base == StorageType::Q6_K || base == StorageType::Q4_0 ||
         base == StorageType::Q8_0;
}

std::vector<uint8_t> repacked(const std::vector<uint8_t>& w, int64_t k, int64_t rows, StorageType x = kX16) {
  std::vector<uint8_t> out(w.size());
  REQUIRE(repack_rows(x, w.data(), out.data(), k, rows).is_ok());
  return out;
}

}  // namespace

TEST_CASE("X16 layouts: the repack is a permutation that unpack_rows inverts", "[cpu]") {
  std::mt19937 rng(11);
  const int64_t k = 512, rows = 32;
  for (StorageType xt : kAllX16) {
    const StorageType base = interleave_base(xt);
    INFO(storage_type_name(xt));
    CHECK(base != xt);
    CHECK(interleaved_of(base) == xt);
    const auto w = base_rows(base, rows, k, rng);
    const auto x = repacked(w, k, rows, xt);
    CHECK(x != w);
    std::vector<uint8_t> back(w.size());
    REQUIRE(unpack_rows(xt, x.data(), back.data(), k, rows).is_ok());
    CHECK(back == w);
    CHECK(interleave_rows(xt) == 16);
    CHECK(storage_row_bytes(xt, 256) == storage_row_bytes(base, 256));
    const auto st = repack_rows(xt, w.data(), back.data(), k, 24);
    CHECK(st.message() == std::string(storage_type_name(xt)) + " needs rows of whole blocks (" +
                              std::to_string(storage_type_info(base).block_size) + " elements) in groups of 16 rows");
    CHECK_FALSE(repack_rows(base, w.data(), back.data(), k, rows).is_ok());
  }
  CHECK(interleaved_of(StorageType::Q5_K) == StorageType::Q5_K);
  // Q4_K_X16's column, spelled out (quant.hpp): row 3's d at byte 6, its dmin at 32 + 6, its
  // scale word 1 at 64 + 64 + 12, its quant word 8p + c = 9 at 256 + 64 * 9 + 12.
  const auto w = q4k_rows(16, 256, rng);
  const auto x = repacked(w, 256, 16);
  const uint8_t* row3 = w.data() + 3 * 144;
  CHECK(std::equal(row3, row3 + 2, x.data() + 6));
  CHECK(std::equal(row3 + 2, row3 + 4, x.data() + 38));
  CHECK(std::equal(row3 + 8, row3 + 12, x.data() + 140));
  CHECK(std::equal(row3 + 16 + 36, row3 + 16 + 40, x.data() + 256 + 64 * 9 + 12));
  // I4_G128_X16's 1088-byte column: row 3's d at byte 6, its z at 32 + 6, its code bytes
  // 4w .. 4w + 3 at 64 + 64 * w + 12.
  const auto g = base_rows(StorageType::I4_G128, 16, 256, rng);
  const auto gx = repacked(g, 256, 16, StorageType::I4_G128_X16);
  const uint8_t* g3 = g.data() + 3 * 136 + 68;  // row 3's second group
  CHECK(std::equal(g3, g3 + 2, gx.data() + 1088 + 6));
  CHECK(std::equal(g3 + 2, g3 + 4, gx.data() + 1088 + 38));
  for (int cw : {0, 7, 15}) CHECK(std::equal(g3 + 4 + 4 * cw, g3 + 8 + 4 * cw, gx.data() + 1088 + 64 + 64 * cw + 12));
  // Q6_K_X16's 3360-byte column: row 3's d (the block's last two bytes) at byte 6, its block
  // bytes 4w .. 4w + 3 (ql, then qh from byte 128, then scales from 192) at 32 + 64 * w + 12.
  const auto q6 = base_rows(StorageType::Q6_K, 16, 512, rng);
  const auto q6x = repacked(q6, 512, 16, StorageType::Q6_K_X16);
  const uint8_t* r3 = q6.data() + 3 * 420 + 210;  // row 3's second super-block
  CHECK(std::equal(r3 + 208, r3 + 210, q6x.data() + 3360 + 6));
  for (int cw : {0, 31, 32, 47, 48, 51}) CHECK(std::equal(r3 + 4 * cw, r3 + 4 * cw + 4, q6x.data() + 3360 + 32 + 64 * cw + 12));
}

// The layouts' scalar reference (matmul_reference) and their SIMD kernels.
TEMPLATE_TEST_CASE("X16 layouts: matmul equals the row-major scalar reference, batch-independent", "[cpu]",
                   sy::test::ScalarSet, sy::test::Avx2Set, sy::test::Avx2VnniSet, sy::test::Avx512VnniSet) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int64_t k = 768, rows = 48;
  ThreadPool pool(3);
  for (StorageType xt : kAllX16) {
    if (isa != Isa::scalar && !offered(xt, isa)) continue;
    const StorageType base = interleave_base(xt);
    const auto w = base_rows(base, rows, k, rng);
    const auto x16 = repacked(w, k, rows, xt);
    for (int64_t m : {1, 4, 7, 40}) {
      std::vector<float> x(static_cast<size_t>(m * k));
      for (auto& v : x) v = nd(rng);
      std::vector<float> ref(static_cast<size_t>(m * rows)), got(ref.size()), alone(static_cast<size_t>(rows));
      REQUIRE(matmul_reference({w.data(), base, k, rows, x.data(), m, ref.data()}).is_ok());
      INFO(storage_type_name(xt) << " m=" << m << " " << TestType::name);
      MatmulArgs a{x16.data(), xt, k, rows, x.data(), m, got.data()};
      if constexpr (isa == Isa::scalar) {
        REQUIRE(matmul_reference(a).is_ok());
        check_close(got, ref);
      } else {
        REQUIRE(dot_kernel(xt, isa).usable());
        std::vector<uint8_t> scratch(matmul_scratch_bytes(xt, k, m, isa));
        REQUIRE(matmul(a, isa, pool, scratch.data()).is_ok());
        check_close(got, ref);
        // The last token alone gives the same bits as inside the batch.
        std::vector<uint8_t> scratch1(matmul_scratch_bytes(xt, k, 1, isa));
        MatmulArgs one{x16.data(), xt, k, rows, x.data() + (m - 1) * k, 1, alone.data()};
        REQUIRE(matmul(one, isa, pool, scratch1.data()).is_ok());
        for (int64_t r = 0; r < rows; ++r) CHECK(alone[static_cast<size_t>(r)] == got[static_cast<size_t>((m - 1) * rows + r)]);
      }
    }
  }
}

TEMPLATE_TEST_CASE("Q4_K_X16: gate/up pairs with row-major Q6_K and matmul_id over experts", "[cpu]", sy::test::Avx2Set,
                   sy::test::Avx2VnniSet, sy::test::Avx512VnniSet) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
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
  if (offered(StorageType::I4_G128_X16, isa)) SECTION("gate/up: interleaved I4_G128 gate, row-major I4_G128 up: one activation conversion") {
    constexpr StorageType xt = StorageType::I4_G128_X16, base = StorageType::I4_G128;
    const auto wg = base_rows(base, rows, k, rng), wu = base_rows(base, rows, k, rng);
    const auto xg = repacked(wg, k, rows, xt);
    REQUIRE(can_share_activations(xt, base, isa));
    std::vector<float> rg(static_cast<size_t>(m * rows)), ru(rg.size()), gg(rg.size()), gu(rg.size());
    REQUIRE(matmul_reference({wg.data(), base, k, rows, x.data(), m, rg.data()}).is_ok());
    REQUIRE(matmul_reference({wu.data(), base, k, rows, x.data(), m, ru.data()}).is_ok());
    std::vector<uint8_t> scratch(matmul_scratch_bytes(xt, k, m, isa));
    REQUIRE(matmul_gate_up({xg.data(), xt, k, rows, x.data(), m, gg.data()}, {wu.data(), base, k, rows, x.data(), m, gu.data()},
                           Glu{}, isa, pool, scratch.data())
                .is_ok());
    check_close(gg, rg);
    check_close(gu, ru);
  }
  for (StorageType xt : kAllX16) {
    if (!offered(xt, isa)) continue;
    DYNAMIC_SECTION("matmul_id: each expert's rows are their own groups, " << storage_type_name(xt)) {
      const StorageType base = interleave_base(xt);
      const int64_t n_experts = 3, n_used = 2;
      const auto w = base_rows(base, rows * n_experts, k, rng);
      const auto xw = repacked(w, k, rows * n_experts, xt);
      const std::vector<int32_t> ids{2, 0, 1, 2, 0, 1, 1, 0, 2, 1};  // [n_used, m]
      std::vector<float> got(static_cast<size_t>(rows * n_used * m));
      MatmulIdArgs a;
      a.w = xw.data();
      a.w_type = xt;
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
      const size_t expert_bytes = *storage_row_bytes(base, k) * rows;
      for (int64_t t = 0; t < m; ++t)
        for (int64_t j = 0; j < n_used; ++j) {
          const int32_t e = ids[static_cast<size_t>(t * n_used + j)];
          std::vector<float> ref(static_cast<size_t>(rows));
          REQUIRE(matmul_reference({w.data() + e * expert_bytes, base, k, rows, x.data() + t * k, 1, ref.data()}).is_ok());
          std::vector<float> part(got.begin() + (t * n_used + j) * rows, got.begin() + (t * n_used + j + 1) * rows);
          check_close(part, ref);
        }
    }
  }
}

TEST_CASE("X16 layouts: refused where no SIMD kernel reads them, and ragged groups are errors", "[cpu]") {
  for (StorageType xt : kAllX16) {
    INFO(storage_type_name(xt));
    CHECK_FALSE(dot_kernel(xt, Isa::scalar).usable());
    CHECK(dot_kernel(xt, Isa::avx2).usable() == offered(xt, Isa::avx2));
    CHECK(dot_kernel_scalar(xt).usable());  // the reference, for tests
    float x[256] = {}, y[24] = {};
    std::vector<uint8_t> w(*storage_row_bytes(xt, 256) * 24);
    CHECK(matmul_reference({w.data(), xt, 256, 24, x, 1, y}).message() ==
          "cpu: " + std::string(storage_type_name(xt)) + " weights come in groups of 16 rows, but the matrix has 24");
  }
}

// Exact integer sums and the same float steps per row (dot_avx2_x16.cpp): the AVX2 build, its
// AVX-VNNI build and the AVX-512 VNNI kernels give the same bits, so a model repacked on one
// machine answers alike on another, and the AVX2 paths CI forces check the AVX-512 one too.
TEMPLATE_TEST_CASE("X16 layouts: the AVX2 kernels equal the AVX-512 VNNI and AVX-VNNI ones bit for bit", "[cpu]",
                   sy::test::Avx2VnniSet, sy::test::Avx512VnniSet) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  std::mt19937 rng(14);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int64_t k = 512, rows = 32;
  ThreadPool pool(2);
  for (StorageType xt : kAllX16) {
    if (!offered(xt, Isa::avx2)) continue;
    const auto x16 = repacked(base_rows(interleave_base(xt), rows, k, rng), k, rows, xt);
    REQUIRE(dot_kernel(xt, isa).isa == isa);
    for (int64_t m : {1, 4, 6}) {
      INFO(storage_type_name(xt) << " m=" << m << " against " << TestType::name);
      std::vector<float> x(static_cast<size_t>(m * k));
      for (auto& v : x) v = nd(rng);
      std::vector<float> plain(static_cast<size_t>(m * rows)), other(plain.size());
      std::vector<uint8_t> scratch(std::max(matmul_scratch_bytes(xt, k, m, Isa::avx2), matmul_scratch_bytes(xt, k, m, isa)));
      REQUIRE(matmul({x16.data(), xt, k, rows, x.data(), m, plain.data()}, Isa::avx2, pool, scratch.data()).is_ok());
      REQUIRE(matmul({x16.data(), xt, k, rows, x.data(), m, other.data()}, isa, pool, scratch.data()).is_ok());
      CHECK(std::memcmp(plain.data(), other.data(), plain.size() * sizeof(float)) == 0);
    }
  }
}

// The largest products the layouts can hold: without VNNI the AVX2 kernels sum byte products
// in 16 bits (vpmaddubsw), which must not saturate. Q8_0 levels of -128 against activation
// levels of -127, Q4_K nibbles of 15 with scales and mins of 63, and Q6_K levels of 31
// (stored 63) with scales of -128, against levels of -127: every product of one sign.
TEMPLATE_TEST_CASE("X16 layouts: the largest levels do not saturate the AVX2 kernels", "[cpu]", sy::test::Avx2Set,
                   sy::test::Avx2VnniSet) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  const int64_t k = 512, rows = 16, m = 4;
  ThreadPool pool(2);
  const auto put16 = [](uint8_t* p, float v) {
    const uint16_t h = fp32_to_fp16(v);
    std::memcpy(p, &h, 2);
  };
  for (StorageType base : {StorageType::Q8_0, StorageType::Q4_K, StorageType::Q6_K}) {
    const size_t bb = storage_type_info(base).block_bytes;
    std::vector<uint8_t> w(*storage_row_bytes(base, k) * rows);
    for (size_t off = 0; off < w.size(); off += bb) {
      if (base == StorageType::Q6_K) {
        std::memset(w.data() + off, 0xff, 192);         // ql and qh: every level 63 - 32
        std::memset(w.data() + off + 192, 0x80, 16);    // scales -128
        put16(w.data() + off + 208, 0.01f);
        continue;
      }
      put16(w.data() + off, 0.01f);
      if (base == StorageType::Q8_0) {
        std::memset(w.data() + off + 2, 0x80, bb - 2);  // level -128
      } else {
        put16(w.data() + off + 2, 0.02f);
        std::memset(w.data() + off + 4, 0xff, bb - 4);  // scales and mins 63, nibbles 15
      }
    }
    const StorageType xt = interleaved_of(base);
    const auto x16 = repacked(w, k, rows, xt);
    std::vector<float> x(static_cast<size_t>(m * k), 1.0f);
    if (base == StorageType::Q8_0)
      for (auto& v : x) v = -1.0f;
    std::vector<float> ref(static_cast<size_t>(m * rows)), got(ref.size());
    REQUIRE(matmul_reference({w.data(), base, k, rows, x.data(), m, ref.data()}).is_ok());
    std::vector<uint8_t> scratch(matmul_scratch_bytes(xt, k, m, isa));
    REQUIRE(matmul({x16.data(), xt, k, rows, x.data(), m, got.data()}, isa, pool, scratch.data()).is_ok());
    INFO(storage_type_name(xt) << " " << TestType::name << ": " << got[0] << " vs " << ref[0]);
    check_close(got, ref);
  }
}

// Q6_K_X16 keeps the row-major AVX2 Q6_K kernel's partial sums and their f32 order
// (dot_avx2_x16.cpp says why: the shared fixtures' logits), so every path that reads the
// layout gives that kernel's bits, for one token and for a batch.
TEMPLATE_TEST_CASE("Q6_K_X16: the same bits as the row-major AVX2 Q6_K kernel", "[cpu]", sy::test::Avx2Set,
                   sy::test::Avx2VnniSet, sy::test::Avx512VnniSet) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  std::mt19937 rng(15);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int64_t k = 768, rows = 32;
  ThreadPool pool(2);
  const auto w = base_rows(StorageType::Q6_K, rows, k, rng);
  const auto x16 = repacked(w, k, rows, StorageType::Q6_K_X16);
  const DotKernel row = dot_kernel_avx2(StorageType::Q6_K);
  const size_t rb = *storage_row_bytes(StorageType::Q6_K, k), ab = *storage_row_bytes(StorageType::Q8_K, k);
  for (int64_t m : {1, 4, 5}) {
    INFO("m=" << m << " " << TestType::name);
    std::vector<float> x(static_cast<size_t>(m * k));
    for (auto& v : x) v = nd(rng);
    std::vector<float> got(static_cast<size_t>(m * rows));
    std::vector<uint8_t> scratch(matmul_scratch_bytes(StorageType::Q6_K_X16, k, m, isa));
    REQUIRE(matmul({x16.data(), StorageType::Q6_K_X16, k, rows, x.data(), m, got.data()}, isa, pool, scratch.data()).is_ok());
    std::vector<uint8_t> act(ab);
    for (int64_t t = 0; t < m; ++t) {
      row.quantize_act(k, x.data() + t * k, act.data());
      for (int64_t r = 0; r < rows; ++r) {
        const float want = row.dot(k, w.data() + static_cast<size_t>(r) * rb, act.data());
        CHECK(got[static_cast<size_t>(t * rows + r)] == want);
      }
    }
  }
}
