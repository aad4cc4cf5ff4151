// AVX2 kernels of the grouped integer types (I4_G*, I8_G*) and the FP8 block types; the
// arithmetic of dot_grouped_scalar.cpp, one 32-element activation block per 256-bit step.
// I4: nibbles 0..15 times signed levels with vpmaddubsw (no pair can saturate). I8: codes
// - 128 as signed bytes with the sign trick, the 128 taken back with the zero point. FP8:
// the half-precision decoding of dot_grouped_avx512.cpp, 8 codes per step.
//
// One kernel for one and for four activation rows (R), as everywhere: a row's arithmetic
// does not depend on R.
#include <cmath>
#include <cstring>

#include "act_q8_sums.hpp"
#include "simd_avx2.hpp"

namespace sy::cpu {
namespace {

using namespace avx2;
using u8 = uint8_t;

inline __m256i load256(const u8* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m128 load_f32(const u8* p) { return _mm_load_ss(reinterpret_cast<const float*>(p)); }

template <int G, int Bits, int R>
void grouped_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  constexpr int kBytes = 4 + G * Bits / 8;
  constexpr int kBlocks = G / 32;
  const __m256i m4 = _mm256_set1_epi8(0x0f), k80 = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m128 off = _mm_set_ss(Bits == 8 ? 128.0f : 0.0f);
  const size_t scales = q8g::scales_offset(n), gsum = q8g::group_sums_offset(n, G);
  // Even and odd groups in two sets of accumulators (dot_grouped_avx512.hpp says why).
  __m256 acc0[R], acc1[R];
  __m128 zacc0[R], zacc1[R];
  for (int r = 0; r < R; ++r) {
    acc0[r] = acc1[r] = _mm256_setzero_ps();
    zacc0[r] = zacc1[r] = _mm_setzero_ps();
  }
  const auto group = [&](int64_t g, __m256* acc, __m128* zacc) {
    const u8* wg = wb + g * kBytes;
    for (int l = 0; l < kBytes; l += 64) prefetch_ahead(wg + l);
    // The group's levels per activation block: I4 unsigned, I8 as codes - 128.
    __m256i u[kBlocks];
    if constexpr (Bits == 8) {
      for (int b = 0; b < kBlocks; ++b) u[b] = _mm256_xor_si256(load256(wg + 4 + 32 * b), k80);
    } else if constexpr (G == 32) {
      u[0] = nibbles(wg + 4);
    } else {
      // Byte j holds element j and element j + G/2.
      for (int h = 0; h < kBlocks / 2; ++h) {
        const __m256i v = load256(wg + 4 + 32 * h);
        u[h] = _mm256_and_si256(v, m4);
        u[h + kBlocks / 2] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
      }
    }
    int dz_bits;
    std::memcpy(&dz_bits, wg, 4);
    const __m128 dz = _mm_cvtph_ps(_mm_cvtsi32_si128(dz_bits));  // d, z
    const __m256 d = _mm256_broadcastss_ps(dz);
    const __m128 zc = _mm_mul_ss(dz, _mm_sub_ss(_mm_movehdup_ps(dz), off));  // d * (z - offset)
    for (int r = 0; r < R; ++r) {
      const u8* ar = ab + r * stride;
      __m256 gs = _mm256_setzero_ps();
      for (int b = 0; b < kBlocks; ++b) {
        const size_t blk = static_cast<size_t>(g) * kBlocks + b;
        const __m256i y = load256(ar + 32 * blk);
        const __m256i p = Bits == 4 ? dpbusd(_mm256_setzero_si256(), u[b], y) : dot_i8(u[b], y);
        const __m256 dx = _mm256_loadu_ps(reinterpret_cast<const float*>(ar + scales + 32 * blk));  // d_b 8 times
        gs = b == 0 ? _mm256_mul_ps(dx, _mm256_cvtepi32_ps(p)) : _mm256_fmadd_ps(dx, _mm256_cvtepi32_ps(p), gs);
      }
      acc[r] = _mm256_fmadd_ps(d, gs, acc[r]);
      zacc[r] = _mm_fmadd_ss(zc, load_f32(ar + gsum + 4 * g), zacc[r]);
    }
  };
  const int64_t ng = n / G;
  int64_t g = 0;
  for (; g + 2 <= ng; g += 2) {
    group(g, acc0, zacc0);
    group(g + 1, acc1, zacc1);
  }
  if (g < ng) group(g, acc0, zacc0);
  for (int r = 0; r < R; ++r)
    out[r] = hsum(_mm256_add_ps(acc0[r], acc1[r])) - _mm_cvtss_f32(_mm_add_ss(zacc0[r], zacc1[r]));
}

template <int G, int Bits>
float grouped_dot(int64_t n, const void* w, const void* a) {
  float out;
  grouped_rows<G, Bits, 1>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), 0, &out);
  return out;
}
template <int G, int Bits>
void grouped_dot4(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  grouped_rows<G, Bits, 4>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), stride, out);
}

// 8 FP8 codes -> f16 bit patterns (dot_grouped_avx512.cpp explains the E4M3 shift).
template <bool E5M2>
inline __m128i fp8_to_f16(__m128i codes8) {
  if constexpr (E5M2) return _mm_slli_epi16(_mm_cvtepu8_epi16(codes8), 8);
  return _mm_and_si128(_mm_slli_epi16(_mm_cvtepi8_epi16(codes8), 7), _mm_set1_epi16(static_cast<short>(0xbfff)));
}

inline bool e4m3_slow(const u8* codes, float s) {
  const __m256i m7f = _mm256_set1_epi8(0x7f);
  __m256i nan = _mm256_setzero_si256();
  for (int i = 0; i < 4; ++i) nan = _mm256_or_si256(nan, _mm256_cmpeq_epi8(_mm256_and_si256(load256(codes + 32 * i), m7f), m7f));
  return !_mm256_testz_si256(nan, nan) || !(std::fabs(s) < 0x1p119f);
}

inline __m256 e4m3_exact(__m128i codes8, float s) {
  const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtph_ps(fp8_to_f16<false>(codes8)), _mm256_set1_ps(256.0f)), _mm256_set1_ps(s));
  const __m128i m7f = _mm_set1_epi16(0x7f);
  const __m128i nan16 = _mm_cmpeq_epi16(_mm_and_si128(_mm_cvtepu8_epi16(codes8), m7f), m7f);
  return _mm256_blendv_ps(v, _mm256_set1_ps(NAN), _mm256_castsi256_ps(_mm256_cvtepi16_epi32(nan16)));
}

template <bool E5M2, int R>
void fp8_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  // Two accumulators per row (AVX2 has 16 registers: four rows of four would spill).
  __m256 acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / 128; ++b, wb += 132) {
    const float s = ld_f32(wb);
    const u8* codes = wb + 4;
    const bool slow = !E5M2 && e4m3_slow(codes, s);
    const __m256 sv = _mm256_set1_ps(E5M2 ? s : s * 256.0f);
    const auto step = [&](int j, __m256* acc) {
      const __m128i c8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + 8 * j));
      const __m256 w = slow ? e4m3_exact(c8, s) : _mm256_mul_ps(_mm256_cvtph_ps(fp8_to_f16<E5M2>(c8)), sv);
      for (int r = 0; r < R; ++r) {
        const auto* x = reinterpret_cast<const float*>(ab + r * stride) + 128 * b + 8 * j;
        acc[r] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x), acc[r]);
      }
    };
    for (int j = 0; j < 16; j += 2) {
      step(j, acc0);
      step(j + 1, acc1);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(_mm256_add_ps(acc0[r], acc1[r]));
}

template <bool E5M2>
float fp8_dot(int64_t n, const void* w, const void* a) {
  float out;
  fp8_rows<E5M2, 1>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), 0, &out);
  return out;
}
template <bool E5M2>
void fp8_dot4(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  fp8_rows<E5M2, 4>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), stride, out);
}

template <int G, int Bits>
constexpr KernelEntry integer(StorageType w) {
  return {w, {.act_type = StorageType::Q8_0, .dot = grouped_dot<G, Bits>, .quantize_act = act_q8_0_gsums, .isa = kUnitIsa,
              .dot4 = grouped_dot4<G, Bits>, .act_bytes = act_q8_0_gsums_bytes}};
}

constexpr KernelEntry kEntries[] = {
    integer<32, 4>(StorageType::I4_G32), integer<64, 4>(StorageType::I4_G64), integer<128, 4>(StorageType::I4_G128),
    integer<32, 8>(StorageType::I8_G32), integer<64, 8>(StorageType::I8_G64), integer<128, 8>(StorageType::I8_G128),
    {StorageType::FP8_E4M3_B128, {StorageType::F32, fp8_dot<false>, act_f32, kUnitIsa, fp8_dot4<false>}},
    {StorageType::FP8_E5M2_B128, {StorageType::F32, fp8_dot<true>, act_f32, kUnitIsa, fp8_dot4<true>}},
};

}  // namespace

constinit const KernelTable SY_AVX2_TABLE(kAvx2Grouped){kEntries};

}  // namespace sy::cpu
