// CPU dot kernels. Reference: dequantize both rows with the SDK's reference dequantizers
// and sum in double. The scalar kernel must match it to float rounding; every SIMD kernel
// this CPU can run must match the scalar kernel.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dot.hpp"
#include "kernel_sets.hpp"
#include "switchyard/cpu.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::cpu;

namespace {

const StorageType kWeightTypes[] = {StorageType::F32,  StorageType::F16,  StorageType::BF16,   StorageType::Q4_0,
                                    StorageType::Q4_1, StorageType::Q5_0, StorageType::Q5_1,   StorageType::Q8_0,
                                    StorageType::IQ4_NL, StorageType::Q2_K, StorageType::Q3_K, StorageType::Q4_K,
                                    StorageType::Q5_K, StorageType::Q6_K, StorageType::IQ4_XS};

struct Rows {
  std::vector<uint8_t> w, a;
  double exact = 0;      // dot of the dequantized rows, in double
  double magnitude = 0;  // sum of |terms|, to scale the tolerance
};

Rows make_rows(StorageType wt, const DotKernel& k, int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (auto& v : x) v = nd(rng);
  for (auto& v : y) v = nd(rng) * 3.f;
  Rows r;
  r.w.resize(*storage_row_bytes(wt, static_cast<uint64_t>(n)));
  r.a.resize(*storage_row_bytes(k.act_type, static_cast<uint64_t>(n)));
  REQUIRE(quantize_row(wt, x.data(), r.w.data(), n).is_ok());
  k.quantize_act(n, y.data(), r.a.data());
  std::vector<float> xd(static_cast<size_t>(n)), yd(static_cast<size_t>(n));
  REQUIRE(dequantize_row(wt, r.w.data(), xd.data(), n).is_ok());
  REQUIRE(dequantize_row(k.act_type, r.a.data(), yd.data(), n).is_ok());
  for (int64_t i = 0; i < n; ++i) {
    r.exact += static_cast<double>(xd[i]) * yd[i];
    r.magnitude += std::fabs(static_cast<double>(xd[i]) * yd[i]);
  }
  return r;
}

}  // namespace

TEST_CASE("scalar dot kernels equal the dequantized double-precision dot", "[cpu][dot]") {
  for (auto wt : kWeightTypes) {
    const auto k = dot_kernel_scalar(wt);
    REQUIRE(k.dot != nullptr);
    const int64_t bs = storage_type_info(wt).block_size;
    for (int64_t blocks : {1, 3, 7, 16}) {
      const int64_t n = bs == 1 ? 37 * blocks : bs * blocks;  // float types: lengths with SIMD tails
      INFO(storage_type_name(wt) << " n=" << n);
      const auto r = make_rows(wt, k, n, static_cast<unsigned>(n) * 31 + static_cast<unsigned>(wt));
      const double got = k.dot(n, r.w.data(), r.a.data());
      CHECK(std::fabs(got - r.exact) <= 1e-5 * r.magnitude + 1e-6);
    }
  }
}

// Every SIMD set, extensions included (kernel_sets.hpp): odd block counts and, for float
// types, lengths that leave SIMD tails; 16 and 37 blocks fill the gathered-scale kernels'
// groups with and without tails.
TEMPLATE_TEST_CASE("SIMD dot kernels agree with the scalar kernel", "[cpu][dot]", SY_SIMD_SETS) {
  SY_REQUIRE_SET(TestType);
  for (auto wt : kWeightTypes) {
    const auto ref = dot_kernel_scalar(wt);
    const auto k = TestType::kernel(wt);
    REQUIRE(k.dot != nullptr);
    CHECK(k.act_type == ref.act_type);
    const int64_t bs = storage_type_info(wt).block_size;
    for (int64_t n : {bs, 3 * bs, 5 * bs, 9 * bs, bs == 1 ? int64_t{37} : 11 * bs, bs == 1 ? int64_t{1000} : 16 * bs,
                      bs == 1 ? int64_t{77} : 37 * bs}) {
      INFO(TestType::name << " " << storage_type_name(wt) << " n=" << n);
      const auto r = make_rows(wt, ref, n, static_cast<unsigned>(n) * 7 + 3);
      const double s = ref.dot(n, r.w.data(), r.a.data());
      const double v = k.dot(n, r.w.data(), r.a.data());
      CHECK(std::fabs(v - s) <= 1e-5 * r.magnitude + 1e-6);
    }
  }
}

TEST_CASE("the kernel ISA is the best the CPU supports, narrowed by SWITCHYARD_CPU_ISA", "[cpu][dot]") {
  const std::string forced = cpu_isa_override();
  const Isa hw = sy::test::hardware_isa();
  // Below AVX-512, AVX-VNNI lifts AVX2 to avx2vnni; forcing avx2 drops it, forcing avx2vnni
  // drops only AVX-512.
  const Isa hw_below_512 = hw == Isa::scalar ? Isa::scalar : sy::test::hardware_avxvnni() ? Isa::avx2vnni : Isa::avx2;
  Isa want = hw == Isa::avx512 ? hw : hw_below_512;
  if (forced == "scalar") want = Isa::scalar;
  if (forced == "avx2" && want != Isa::scalar) want = Isa::avx2;
  if (forced == "avx2vnni") want = hw_below_512;
  INFO("forced '" << forced << "', expected " << isa_name(want));
  CHECK(detect_isa() == want);
}

// Asking is safe on any CPU: the tables are data (dot_tables.hpp); no kernel runs here.
TEST_CASE("every weight type has its own AVX2, AVX-VNNI and AVX-512 kernel (no fallback left)", "[cpu][dot]") {
  for (auto wt : kWeightTypes) {
    INFO(storage_type_name(wt));
    CHECK(dot_kernel_avx2(wt).isa == Isa::avx2);
    CHECK(dot_kernel_avx2vnni(wt).isa == Isa::avx2vnni);
    CHECK(dot_kernel_avx512(wt).isa == Isa::avx512);
  }
}

// The VNNI build computes the same integers with fewer instructions (simd_avx2.hpp), so its
// results are the AVX2 kernels' exactly; a pair that saturated vpmaddubsw in one build and
// not in the other would show here (and against the scalar kernel, above and below).
TEST_CASE("AVX-VNNI kernels equal the AVX2 kernels bit for bit, one row and four", "[cpu][dot]") {
  SY_REQUIRE_SET(sy::test::Avx2VnniSet);
  for (auto wt : kWeightTypes) {
    const auto plain = dot_kernel_avx2(wt), vnni = dot_kernel_avx2vnni(wt);
    REQUIRE(vnni.dot != nullptr);
    CHECK((plain.dot4 == nullptr) == (vnni.dot4 == nullptr));
    const int64_t bs = storage_type_info(wt).block_size;
    for (int64_t n : {bs, 3 * bs, bs == 1 ? int64_t{77} : 16 * bs}) {
      INFO(storage_type_name(wt) << " n=" << n);
      const size_t ab = *storage_row_bytes(vnni.act_type, static_cast<uint64_t>(n));
      const auto w = make_rows(wt, vnni, n, 300);
      std::vector<uint8_t> acts(ab * 4);
      for (int r = 0; r < 4; ++r) {
        const auto a = make_rows(wt, vnni, n, 400 + static_cast<unsigned>(r)).a;
        std::copy(a.begin(), a.end(), acts.begin() + static_cast<ptrdiff_t>(r * ab));
        CHECK(vnni.dot(n, w.w.data(), acts.data() + r * ab) == plain.dot(n, w.w.data(), acts.data() + r * ab));
      }
      if (!vnni.dot4) continue;
      float got[4], want[4];
      vnni.dot4(n, w.w.data(), acts.data(), ab, got);
      plain.dot4(n, w.w.data(), acts.data(), ab, want);
      for (int r = 0; r < 4; ++r) CHECK(got[r] == want[r]);
    }
  }
}

// Bit for bit, not within a tolerance: a token's logits must not depend on which other
// tokens share its batch (matmul uses the 4-row kernel for groups of four rows and the
// single-row one for the rest; matmul_id groups by however many tokens chose an expert).
TEMPLATE_TEST_CASE("4-row kernels equal four single-row dots bit for bit", "[cpu][dot]", SY_SIMD_SETS) {
  SY_REQUIRE_SET(TestType);
  for (auto wt : kWeightTypes) {
    const auto k = TestType::kernel(wt);
    if (!k.dot4) continue;
    const int64_t bs = storage_type_info(wt).block_size;
    // Odd and even block counts, below and above the kernels' unrolling.
    for (int64_t n : {bs, 2 * bs, 3 * bs, 5 * bs, 8 * bs, 9 * bs}) {
      INFO(TestType::name << " " << storage_type_name(wt) << " n=" << n);
      const size_t ab = *storage_row_bytes(k.act_type, static_cast<uint64_t>(n));
      const auto r0 = make_rows(wt, k, n, 100);
      std::vector<uint8_t> acts(ab * 4);
      std::vector<Rows> rows;
      for (int r = 0; r < 4; ++r) {
        rows.push_back(make_rows(wt, k, n, 200 + static_cast<unsigned>(r)));
        std::copy(rows.back().a.begin(), rows.back().a.end(), acts.begin() + static_cast<ptrdiff_t>(r * ab));
      }
      float out[4];
      k.dot4(n, r0.w.data(), acts.data(), ab, out);
      for (int r = 0; r < 4; ++r) {
        const float one = k.dot(n, r0.w.data(), rows[static_cast<size_t>(r)].a.data());
        CHECK(out[r] == one);
      }
    }
  }
}

TEST_CASE("activation conversion is defined on NaN and infinities (a damaged model's values)", "[cpu][dot]") {
  // The sanitizer run turns an undefined float-to-int8 conversion into a failure; here the
  // values must also be the documented ones: NaN reads as 0, a block holding an infinity
  // has an infinite scale and so quantizes every value to 0.
  std::vector<float> x(32, 1.f);
  x[3] = NAN;
  std::vector<uint8_t> q(34);
  act_q8_0(32, x.data(), q.data());
  CHECK(static_cast<int8_t>(q[2 + 3]) == 0);
  CHECK(static_cast<int8_t>(q[2 + 0]) == 127);
  x[3] = INFINITY;
  act_q8_0(32, x.data(), q.data());
  for (int j = 0; j < 32; ++j) CHECK(static_cast<int8_t>(q[2 + j]) == 0);
}

namespace {

// Where each quantized type keeps its half-precision scale fields inside a block (the
// rest of the block is levels and packed scales, any byte pattern of which is valid).
struct BlockLayout {
  StorageType type;
  std::vector<int> f16_fields;
};
const BlockLayout kLayouts[] = {
    {StorageType::Q4_0, {0}},       {StorageType::Q4_1, {0, 2}},    {StorageType::Q5_0, {0}},
    {StorageType::Q5_1, {0, 2}},    {StorageType::Q8_0, {0}},       {StorageType::IQ4_NL, {0}},
    {StorageType::Q2_K, {80, 82}},  {StorageType::Q3_K, {108}},     {StorageType::Q4_K, {0, 2}},
    {StorageType::Q5_K, {0, 2}},    {StorageType::Q6_K, {208}},     {StorageType::IQ4_XS, {0}}};

// Weight rows of raw block bytes: all 0xFF (every level and scale at its maximum; Q8_0
// weights -1), all 0x00, 0x80 (Q8_0's -128), 0x7F, and random bytes. Scale fields hold
// finite values.
std::vector<uint8_t> extreme_weights(StorageType t, const std::vector<int>& f16_fields, int64_t n, int pattern) {
  const size_t bb = storage_type_info(t).block_bytes;
  std::vector<uint8_t> w(*storage_row_bytes(t, static_cast<uint64_t>(n)));
  std::mt19937 rng(static_cast<unsigned>(pattern) * 101 + static_cast<unsigned>(t));
  const uint8_t fill[] = {0xff, 0x00, 0x80, 0x7f};
  for (auto& b : w) b = pattern < 4 ? fill[pattern] : static_cast<uint8_t>(rng());
  for (size_t off = 0; off < w.size(); off += bb)
    for (int f : f16_fields) {
      const uint16_t h = fp32_to_fp16(0.01f + 0.001f * static_cast<float>(rng() % 16));
      std::memcpy(&w[off + static_cast<size_t>(f)], &h, 2);
    }
  return w;
}

// Activation rows in the dot type built from int8 levels directly: all +127, all -127,
// alternating, and random in [-127, 127] (the activation quantizers never produce -128).
// Q8_K's block sums are the sums of the levels, as the quantizer writes them.
std::vector<uint8_t> extreme_acts(StorageType act, int64_t n, int pattern) {
  std::mt19937 rng(static_cast<unsigned>(pattern) + 7);
  std::vector<int8_t> q(static_cast<size_t>(n));
  for (size_t i = 0; i < q.size(); ++i) {
    const int v = pattern == 0 ? 127 : pattern == 1 ? -127 : pattern == 2 ? (i % 2 ? 127 : -127)
                                                                          : static_cast<int>(rng() % 255) - 127;
    q[i] = static_cast<int8_t>(v);
  }
  std::vector<uint8_t> a(*storage_row_bytes(act, static_cast<uint64_t>(n)));
  if (act == StorageType::Q8_0) {
    for (int64_t b = 0; b < n / 32; ++b) {
      const uint16_t h = fp32_to_fp16(0.02f);
      std::memcpy(&a[static_cast<size_t>(34 * b)], &h, 2);
      std::memcpy(&a[static_cast<size_t>(34 * b + 2)], &q[static_cast<size_t>(32 * b)], 32);
    }
  } else {
    for (int64_t b = 0; b < n / 256; ++b) {
      uint8_t* blk = &a[static_cast<size_t>(292 * b)];
      const float d = 0.02f;
      std::memcpy(blk, &d, 4);
      std::memcpy(blk + 4, &q[static_cast<size_t>(256 * b)], 256);
      for (int g = 0; g < 16; ++g) {
        int s = 0;
        for (int j = 0; j < 16; ++j) s += q[static_cast<size_t>(256 * b + 16 * g + j)];
        const auto s16 = static_cast<int16_t>(s);
        std::memcpy(blk + 260 + 2 * g, &s16, 2);
      }
    }
  }
  return a;
}

// The case a pairwise-saturating int8 product (vpmaddubsw) or a sign trick would get wrong:
// the scalar kernel sums exact integers. For each layout, weight pattern and four
// activation patterns: the row-dot and 4-row kernels of a set against the scalar kernel,
// and the scalar kernel against the exact dot.
template <class Check>
void for_extreme_rows(Check&& check) {
  for (const auto& layout : kLayouts) {
    const auto ref = dot_kernel_scalar(layout.type);
    // Odd block counts: 41 blocks of 32 reach every loop tail of the paired-block kernels.
    const int64_t bs = storage_type_info(layout.type).block_size;
    const int64_t n = bs * (bs == 32 ? 41 : 5);
    for (int wp = 0; wp < 5; ++wp) {
      const auto w = extreme_weights(layout.type, layout.f16_fields, n, wp);
      std::vector<float> wd(static_cast<size_t>(n)), ad(static_cast<size_t>(n));
      REQUIRE(dequantize_row(layout.type, w.data(), wd.data(), n).is_ok());
      std::vector<std::vector<uint8_t>> acts;
      std::vector<double> exact, magnitude;
      for (int ap = 0; ap < 4; ++ap) {
        acts.push_back(extreme_acts(ref.act_type, n, ap));
        REQUIRE(dequantize_row(ref.act_type, acts.back().data(), ad.data(), n).is_ok());
        double e = 0, m = 0;
        for (int64_t i = 0; i < n; ++i) {
          e += static_cast<double>(wd[static_cast<size_t>(i)]) * ad[static_cast<size_t>(i)];
          m += std::fabs(static_cast<double>(wd[static_cast<size_t>(i)]) * ad[static_cast<size_t>(i)]);
        }
        exact.push_back(e);
        magnitude.push_back(m);
      }
      INFO(storage_type_name(layout.type) << " weights " << wp);
      check(layout.type, ref, n, w, acts, exact, magnitude);
    }
  }
}

}  // namespace

TEST_CASE("scalar dot kernels equal the exact dot on extreme levels and activations", "[cpu][dot]") {
  for_extreme_rows([](StorageType, const DotKernel& ref, int64_t n, const std::vector<uint8_t>& w,
                      const std::vector<std::vector<uint8_t>>& acts, const std::vector<double>& exact,
                      const std::vector<double>& magnitude) {
    for (size_t ap = 0; ap < acts.size(); ++ap) {
      INFO("activations " << ap);
      CHECK(std::fabs(ref.dot(n, w.data(), acts[ap].data()) - exact[ap]) <= 1e-5 * magnitude[ap] + 1e-6);
    }
  });
}

TEMPLATE_TEST_CASE("SIMD dot kernels equal the scalar kernel on extreme levels and activations", "[cpu][dot]", SY_SIMD_SETS) {
  SY_REQUIRE_SET(TestType);
  for_extreme_rows([](StorageType type, const DotKernel& ref, int64_t n, const std::vector<uint8_t>& w,
                      const std::vector<std::vector<uint8_t>>& acts, const std::vector<double>&,
                      const std::vector<double>& magnitude) {
    const auto k = TestType::kernel(type);
    REQUIRE(k.dot != nullptr);
    for (size_t ap = 0; ap < acts.size(); ++ap) {
      INFO(TestType::name << " activations " << ap);
      const double s = ref.dot(n, w.data(), acts[ap].data());
      CHECK(std::fabs(k.dot(n, w.data(), acts[ap].data()) - s) <= 1e-5 * magnitude[ap] + 1e-6);
    }
    if (!k.dot4) return;
    // dot4 over the four activation patterns at once.
    const size_t ab = acts[0].size();
    std::vector<uint8_t> a4(4 * ab);
    for (size_t r = 0; r < 4; ++r) std::copy(acts[r].begin(), acts[r].end(), a4.begin() + static_cast<ptrdiff_t>(r * ab));
    float out[4];
    k.dot4(n, w.data(), a4.data(), ab, out);
    for (size_t r = 0; r < 4; ++r) {
      INFO(TestType::name << " dot4 row " << r);
      CHECK(std::fabs(out[r] - ref.dot(n, w.data(), acts[r].data())) <= 1e-5 * magnitude[r] + 1e-5);
    }
  });
}
