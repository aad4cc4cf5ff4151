// The CPU kernels of the grouped integer types (I4_G*, I8_G*) and the FP8 block types
// (FP8_*_B128), on every kernel set (scalar, AVX2, AVX-512, AVX-512 VNNI: each a test case of
// its own, skipped where the CPU lacks it),
// against a float64 dot of the runtime's reference dequantization (dequantize_row):
// - the kernel alone, on the activations it was given (quantized for the integer types):
//   float rounding only, 1e-5 of the sum of |terms| as in the other kernels' tests (the
//   terms of the formula the integer kernels evaluate: rounding_scale);
// - matmul and matmul_id on f32 activations: against the float64 dot with the activations
//   as converted (float rounding only), and with the f32 activations, from which the
//   integer types' results differ by the activation quantization, bounded per element by
//   what act_q8_0 can do (half a step, plus the f16 rounding of the step times 127).
// Odd group counts, row counts and token counts reach every loop tail.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "act_q8_sums.hpp"
#include "kernel_sets.hpp"
#include "matmul.hpp"
#include "matmul_id.hpp"
#include "switchyard/cpu.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::cpu;

// The grouped types have no BF16 variant.
#define SY_GROUPED_SETS sy::test::ScalarSet, sy::test::Avx2Set, sy::test::Avx2VnniSet, sy::test::Avx512Set, sy::test::Avx512VnniSet

namespace {

constexpr StorageType kIntTypes[] = {StorageType::I4_G32, StorageType::I4_G64, StorageType::I4_G128,
                                     StorageType::I8_G32, StorageType::I8_G64, StorageType::I8_G128};
constexpr StorageType kFp8Types[] = {StorageType::FP8_E4M3_B128, StorageType::FP8_E5M2_B128};
const std::vector<StorageType> kAllTypes = {StorageType::I4_G32, StorageType::I4_G64, StorageType::I4_G128,
                                            StorageType::I8_G32, StorageType::I8_G64, StorageType::I8_G128,
                                            StorageType::FP8_E4M3_B128, StorageType::FP8_E5M2_B128};

bool is_fp8(StorageType t) { return t == StorageType::FP8_E4M3_B128 || t == StorageType::FP8_E5M2_B128; }
int bits_of(StorageType t) { return t == StorageType::I8_G32 || t == StorageType::I8_G64 || t == StorageType::I8_G128 ? 8 : 4; }

void put16(uint8_t* p, float v) {
  const uint16_t h = fp32_to_fp16(v);
  std::memcpy(p, &h, 2);
}

// Weight rows with random codes. Integer types: scales of either sign, zero points mostly
// the integers the checkpoints use (8 or 128 for symmetric ones) and some that are not
// integers (the kernels must not rely on it). FP8: every code but E4M3's NaN, scales over
// a wide range.
std::vector<uint8_t> random_weights(StorageType t, int64_t k, int64_t rows, std::mt19937& rng) {
  const auto& info = storage_type_info(t);
  const size_t bb = info.block_bytes;
  std::vector<uint8_t> w(*storage_row_bytes(t, static_cast<uint64_t>(k)) * static_cast<size_t>(rows));
  std::uniform_real_distribution<float> mag(0.002f, 0.05f);
  for (size_t off = 0; off < w.size(); off += bb) {
    uint8_t* b = w.data() + off;
    if (is_fp8(t)) {
      const float s = std::ldexp(mag(rng), static_cast<int>(rng() % 9) - 4) * (rng() % 2 ? 1.f : -1.f);
      std::memcpy(b, &s, 4);
      for (size_t j = 4; j < bb; ++j) {
        auto c = static_cast<uint8_t>(rng());
        if (t == StorageType::FP8_E4M3_B128 && (c & 0x7f) == 0x7f) c = static_cast<uint8_t>(c ^ 1);
        if (t == StorageType::FP8_E5M2_B128 && (c & 0x7c) == 0x7c) c = static_cast<uint8_t>(c & ~0x40);  // finite
        b[j] = c;
      }
      continue;
    }
    const int top = bits_of(t) == 4 ? 15 : 255;
    const int zi = static_cast<int>(rng() % static_cast<unsigned>(top + 1));
    const int kind = static_cast<int>(rng() % 4);
    const float z = kind == 0 ? (top + 1) / 2.0f : kind == 1 ? static_cast<float>(zi) : kind == 2 ? zi + 0.5f : zi * 0.75f;
    put16(b, mag(rng) * (rng() % 3 == 0 ? -1.f : 1.f));
    put16(b + 2, z);
    for (size_t j = 4; j < bb; ++j) b[j] = static_cast<uint8_t>(rng());
  }
  return w;
}

std::vector<float> random_acts(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = nd(rng) * 3.f;
  return x;
}

std::vector<float> dequantized(StorageType t, const uint8_t* w, int64_t k) {
  std::vector<float> v(static_cast<size_t>(k));
  REQUIRE(dequantize_row(t, w, v.data(), k).is_ok());
  return v;
}

// The activations as a kernel sees them: f32, or dx_b * y_j for act_q8_0_gsums.
std::vector<float> act_values(const DotKernel& kern, const std::vector<uint8_t>& a, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  if (kern.act_type == StorageType::F32) {
    std::memcpy(v.data(), a.data(), v.size() * 4);
    return v;
  }
  for (int64_t i = 0; i < n; ++i)  // act_q8_sums.hpp's planar layout: levels, then each block's d 8 times
    v[static_cast<size_t>(i)] = ld_f32(a.data() + q8g::scales_offset(n) + 32 * (i / 32)) * static_cast<float>(static_cast<int8_t>(a[static_cast<size_t>(i)]));
  return v;
}

struct Exact {
  double dot = 0;
};
Exact exact_dot(const std::vector<float>& w, const float* a) {
  Exact e;
  for (size_t i = 0; i < w.size(); ++i) e.dot += static_cast<double>(w[i]) * a[i];
  return e;
}

// The scale of a kernel's f32 rounding: 1e-5 of it is allowed, as the other kernel tests
// allow 1e-5 of the sum of |terms|. The integer kernels evaluate d * sum(q * y) and
// d * (z - offset) * sum(y) apart and subtract them (offset 128 where I8 codes are
// recentred), so the terms are |d| * (q + |z| + offset) * |y|, not |d * (q - z) * y|: with
// q = z the weights are 0, but the two sums are not, and neither is their rounding.
double rounding_scale(StorageType t, const uint8_t* w, const float* a, int64_t n) {
  const auto deq = dequantized(t, w, n);
  double s = 0;
  if (is_fp8(t)) {
    for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(deq[static_cast<size_t>(i)]) * a[i]);
    return s;
  }
  const auto& info = storage_type_info(t);
  const int64_t g = info.block_size;
  const int bits = bits_of(t);
  for (int64_t grp = 0; grp < n / g; ++grp) {
    const uint8_t* b = w + grp * info.block_bytes;
    uint16_t dh, zh;
    std::memcpy(&dh, b, 2);
    std::memcpy(&zh, b + 2, 2);
    const double d = std::fabs(fp16_to_fp32(dh)), z = std::fabs(fp16_to_fp32(zh)) + (bits == 8 ? 128 : 0);
    for (int64_t e = 0; e < g; ++e) {
      const int q = bits == 8 ? b[4 + e] : e < g / 2 ? b[4 + e] & 0xf : b[4 + e - g / 2] >> 4;
      s += d * (q + z) * std::fabs(static_cast<double>(a[grp * g + e]));
    }
  }
  return s;
}

// How far a matmul output may lie from the float64 dot of the dequantized weights with the
// f32 activations x, beyond f32 rounding. Integer types: act_q8_0 rounds x / d to an
// integer (error d / 2) and stores d in f16 (relative error 2^-11, times levels up to 127):
// at most 0.57 d per element, d = max |x| of the block / 127. FP8 takes x as it is.
double activation_error(StorageType t, const std::vector<float>& w, const float* x) {
  if (is_fp8(t)) return 0;
  double bound = 0;
  const int64_t n = static_cast<int64_t>(w.size());
  for (int64_t b = 0; b < n / 32; ++b) {
    double amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(static_cast<double>(x[32 * b + j])));
    for (int j = 0; j < 32; ++j) bound += std::fabs(static_cast<double>(w[static_cast<size_t>(32 * b + j)])) * 0.57 * amax / 127;
  }
  return bound;
}

// The activation row x as `kern` converts it, read back as floats.
std::vector<float> seen_by(const DotKernel& kern, const float* x, int64_t n) {
  std::vector<uint8_t> a(act_row_bytes(kern, n));
  kern.quantize_act(n, x, a.data());
  return act_values(kern, a, n);
}

// A matmul output against both references: the float64 dot with the converted activations
// (float rounding only: a wrong tile, row or zero-point term shows here) and the one with
// the f32 activations (within the conversion's bound: the conversion itself is right).
void check_output(StorageType t, float got, const std::vector<float>& w, const uint8_t* w_bytes, const float* x,
                  const std::vector<float>& seen) {
  const int64_t n = static_cast<int64_t>(w.size());
  const double rounding = 1e-5 * rounding_scale(t, w_bytes, seen.data(), n) + 1e-6;
  CHECK(std::fabs(got - exact_dot(w, seen.data()).dot) <= rounding);
  CHECK(std::fabs(got - exact_dot(w, x).dot) <= activation_error(t, w, x) + rounding);
}

}  // namespace

TEMPLATE_TEST_CASE("grouped and FP8 kernels: each kernel set equals the float64 dot of the reference dequantization", "[cpu][dot]", SY_GROUPED_SETS) {
  SY_REQUIRE_SET(TestType);
  std::mt19937 rng(2024);
  for (StorageType t : kAllTypes) {
    const DotKernel k = TestType::kernel(t);
    REQUIRE(k.dot != nullptr);
    CHECK(k.isa == TestType::isa);
    const int64_t bs = storage_type_info(t).block_size;
    for (int64_t blocks : {1, 2, 3, 5, 8, 9, 33}) {
      const int64_t n = bs * blocks;
      INFO(TestType::name << " " << storage_type_name(t) << " n=" << n);
      const auto w = random_weights(t, n, 1, rng);
      const auto x = random_acts(n, rng);
      std::vector<uint8_t> a(act_row_bytes(k, n));
      k.quantize_act(n, x.data(), a.data());
      const auto av = act_values(k, a, n);
      const auto e = exact_dot(dequantized(t, w.data(), n), av.data());
      CHECK(std::fabs(k.dot(n, w.data(), a.data()) - e.dot) <= 1e-5 * rounding_scale(t, w.data(), av.data(), n) + 1e-6);
    }
  }
}

TEMPLATE_TEST_CASE("grouped kernels: extreme codes, zero points and activations (no saturating product)", "[cpu][dot]", SY_GROUPED_SETS) {
  SY_REQUIRE_SET(TestType);
  // All codes at 0 or at their maximum, zero points at both ends, activations all +-127 or
  // alternating: vpmaddubsw pairs would saturate on I8's codes if taken as stored.
  for (StorageType t : kIntTypes) {
    const DotKernel k = TestType::kernel(t);
    const int64_t g = storage_type_info(t).block_size, n = 37 * g;
    const size_t bb = storage_type_info(t).block_bytes;
    const int top = bits_of(t) == 4 ? 15 : 255;
    for (int wp = 0; wp < 4; ++wp)
      for (int ap = 0; ap < 3; ++ap) {
        INFO(TestType::name << " " << storage_type_name(t) << " weights " << wp << " activations " << ap);
        std::vector<uint8_t> w(*storage_row_bytes(t, static_cast<uint64_t>(n)));
        for (size_t off = 0; off < w.size(); off += bb) {
          put16(&w[off], 0.03f);
          put16(&w[off + 2], wp % 2 ? 0.0f : static_cast<float>(top));
          std::memset(&w[off + 4], wp < 2 ? 0xff : 0x00, bb - 4);
        }
        std::vector<float> x(static_cast<size_t>(n));
        for (size_t i = 0; i < x.size(); ++i) x[i] = ap == 0 ? 1.f : ap == 1 ? -1.f : (i % 2 ? 1.f : -1.f);
        std::vector<uint8_t> a(act_row_bytes(k, n));
        k.quantize_act(n, x.data(), a.data());
        const auto av = act_values(k, a, n);
        const auto e = exact_dot(dequantized(t, w.data(), n), av.data());
        CHECK(std::fabs(k.dot(n, w.data(), a.data()) - e.dot) <= 1e-5 * rounding_scale(t, w.data(), av.data(), n) + 1e-6);
      }
  }
}

TEMPLATE_TEST_CASE("grouped and FP8 4-row kernels equal four single-row dots bit for bit", "[cpu][dot]", SY_GROUPED_SETS) {
  SY_REQUIRE_SET(TestType);
  std::mt19937 rng(99);
  for (StorageType t : kAllTypes) {
    const DotKernel k = TestType::kernel(t);
    if (!k.dot4) continue;
    const int64_t bs = storage_type_info(t).block_size;
    for (int64_t n : {bs, 2 * bs, 3 * bs, 7 * bs, 35 * bs}) {  // 16-group blocks from 16
      INFO(TestType::name << " " << storage_type_name(t) << " n=" << n);
      const auto w = random_weights(t, n, 1, rng);
      const size_t ab = act_row_bytes(k, n);
      std::vector<uint8_t> acts(4 * ab);
      for (int r = 0; r < 4; ++r) k.quantize_act(n, random_acts(n, rng).data(), acts.data() + r * ab);
      float out[4];
      k.dot4(n, w.data(), acts.data(), ab, out);
      for (int r = 0; r < 4; ++r) CHECK(out[r] == k.dot(n, w.data(), acts.data() + r * ab));
    }
  }
}

TEMPLATE_TEST_CASE("FP8 kernels: every code decodes exactly, NaN codes and huge scales included", "[cpu][dot]", SY_GROUPED_SETS) {
  SY_REQUIRE_SET(TestType);
  // One block per code c with a single weight c at position j and activation 1 there: the
  // dot is the dequantized value itself, which must be the reference's bit for bit.
  for (StorageType t : kFp8Types)
    for (float s : {1.0f, -0.375f, 0x1p-20f, 0x1p121f}) {
      const DotKernel k = TestType::kernel(t);
      std::vector<uint8_t> w(132 * 2, 0);
      std::vector<float> x(256, 0.f);
      for (int c = 0; c < 256; ++c) {
        INFO(TestType::name << " " << storage_type_name(t) << " scale " << s << " code " << c);
        std::fill(w.begin(), w.end(), 0);
        std::memcpy(&w[0], &s, 4);
        std::memcpy(&w[132], &s, 4);
        const int j = 1 + c % 200;  // position 1..200, across both blocks
        w[static_cast<size_t>(j < 128 ? 4 + j : 132 + 4 + (j - 128))] = static_cast<uint8_t>(c);
        std::fill(x.begin(), x.end(), 0.f);
        x[static_cast<size_t>(j)] = 1.f;
        const auto ref = dequantized(t, w.data(), 256);
        const float got = k.dot(256, w.data(), x.data());
        if (std::isnan(ref[static_cast<size_t>(j)]))
          CHECK(std::isnan(got));
        else
          CHECK(got == ref[static_cast<size_t>(j)]);
      }
    }
}

TEMPLATE_TEST_CASE("matmul of grouped and FP8 weights on every ISA is within the activation error of the float64 dot", "[cpu]", SY_ISA_SETS) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  std::mt19937 rng(7);
  ThreadPool pool(3);
  for (StorageType t : kAllTypes) {
    const int64_t bs = storage_type_info(t).block_size;
    const int64_t k = bs * (bs == 32 ? 39 : 17);  // odd block counts, past 16-group blocks
    const int64_t rows = 37;
    const auto w = random_weights(t, k, rows, rng);
    const size_t rb = *storage_row_bytes(t, static_cast<uint64_t>(k));
    std::vector<std::vector<float>> wd;
    for (int64_t r = 0; r < rows; ++r) wd.push_back(dequantized(t, w.data() + r * rb, k));
    for (int64_t m : {1, 5, 40}) {  // GEMV, the 4-row kernel and one left over, two tiles
      const auto x = random_acts(m * k, rng);
      std::vector<float> got(static_cast<size_t>(m * rows));
      INFO(storage_type_name(t) << " m=" << m << " isa=" << isa_name(isa));
      const DotKernel kern = dot_kernel(t, isa);
      CHECK(kern.dot != nullptr);  // its own kernel, not the generic one
      std::vector<uint8_t> scratch(matmul_scratch_bytes(t, k, m, isa));
      MatmulArgs a{w.data(), t, k, rows, x.data(), m, got.data()};
      REQUIRE(matmul(a, isa, pool, scratch.data()).is_ok());
      for (int64_t i = 0; i < m; ++i) {
        const float* xi = x.data() + i * k;
        const auto seen = seen_by(kern, xi, k);
        for (int64_t r = 0; r < rows; ++r)
          check_output(t, got[static_cast<size_t>(i * rows + r)], wd[static_cast<size_t>(r)], w.data() + r * rb, xi, seen);
      }
    }
  }
}

TEMPLATE_TEST_CASE("matmul_id of grouped and FP8 experts on every ISA is within the activation error of the float64 dot", "[cpu]", SY_ISA_SETS) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  const int64_t rows = 21, n_experts = 6, n_used = 3;
  std::mt19937 rng(8);
  ThreadPool pool(3);
  MatmulIdScratch scratch;
  for (StorageType t : kAllTypes) {
    const int64_t k = storage_type_info(t).block_size * 17;
    const auto w = random_weights(t, k, rows * n_experts, rng);
    const size_t rb = *storage_row_bytes(t, static_cast<uint64_t>(k));
    std::vector<std::vector<float>> wd;
    for (int64_t r = 0; r < rows * n_experts; ++r) wd.push_back(dequantized(t, w.data() + r * rb, k));
    for (int64_t n_tokens : {int64_t{1}, int64_t{9}}) {
      std::vector<int32_t> ids(static_cast<size_t>(n_used * n_tokens));
      for (auto& id : ids) id = static_cast<int32_t>(rng() % n_experts);
      ids[1] = ids[0];  // one token picking an expert twice
      for (int64_t slots : {int64_t{1}, n_used}) {
        const auto x = random_acts(k * slots * n_tokens, rng);
        std::vector<float> got(static_cast<size_t>(rows * n_used * n_tokens));
        INFO(storage_type_name(t) << " tokens=" << n_tokens << " slots=" << slots << " isa=" << isa_name(isa));
        std::fill(got.begin(), got.end(), std::nanf(""));
        MatmulIdArgs a{w.data(), t, k, rows, n_experts, x.data(), slots, ids, n_used, n_tokens, got.data()};
        REQUIRE(matmul_id(a, isa, pool, scratch).is_ok());
        const DotKernel kern = dot_kernel(t, isa);
        for (int64_t tok = 0; tok < n_tokens; ++tok)
          for (int64_t j = 0; j < n_used; ++j) {
            const int64_t e = ids[static_cast<size_t>(j + tok * n_used)];
            const float* xi = x.data() + ((slots == 1 ? 0 : j) + tok * slots) * k;
            const auto seen = seen_by(kern, xi, k);
            for (int64_t r = 0; r < rows; ++r)
              check_output(t, got[static_cast<size_t>((j + tok * n_used) * rows + r)], wd[static_cast<size_t>(e * rows + r)],
                           w.data() + (e * rows + r) * static_cast<int64_t>(rb), xi, seen);
          }
      }
    }
  }
}

TEMPLATE_TEST_CASE("grouped weights of one type share converted activations in a gate/up pair", "[cpu]", SY_ISA_SETS) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  const int64_t k = 256, rows = 19, m = 6;
  std::mt19937 rng(9);
  ThreadPool pool(2);
  const auto wg = random_weights(StorageType::I4_G128, k, rows, rng);
  const auto wu = random_weights(StorageType::I4_G128, k, rows, rng);
  const auto x = random_acts(m * k, rng);
  INFO(isa_name(isa));
  CHECK(can_share_activations(StorageType::I4_G128, StorageType::I8_G32, isa));
  std::vector<float> g(static_cast<size_t>(m * rows)), u(g.size()), fg(g.size()), fu(g.size());
  std::vector<uint8_t> scratch(matmul_scratch_bytes(StorageType::I4_G128, k, m, isa));
  MatmulArgs ga{wg.data(), StorageType::I4_G128, k, rows, x.data(), m, g.data()};
  MatmulArgs ua{wu.data(), StorageType::I4_G128, k, rows, x.data(), m, u.data()};
  REQUIRE(matmul(ga, isa, pool, scratch.data()).is_ok());
  REQUIRE(matmul(ua, isa, pool, scratch.data()).is_ok());
  ga.y = fg.data(), ua.y = fu.data();
  REQUIRE(matmul_gate_up(ga, ua, Glu{}, isa, pool, scratch.data()).is_ok());
  CHECK(fg == g);
  CHECK(fu == u);
}
