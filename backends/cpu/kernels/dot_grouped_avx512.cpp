// AVX-512 (F, BW, VL) kernels of the grouped integer types (dot_grouped_avx512.hpp, with
// vpmaddubsw products) and of the FP8 block types.
//
// FP8 codes become f32 in registers through half precision: an E5M2 code is the top byte
// of the f16 of the same value; an E4M3 code's sign, exponent and mantissa shifted into an
// f16 one bit lower give value / 256 for normal and subnormal codes alike, and the 256 is
// folded into the block's scale. Each weight is then code value * s rounded once, exactly
// the reference dequantization's f32, and is multiplied with the f32 activation and summed
// in f32. E4M3's NaN codes (S.1111.111) and scales so large that s * 256 overflows take a
// slower exact path per block (never in a sane checkpoint).
#include <cmath>

#include "dot_grouped_avx512.hpp"

namespace sy::cpu {
namespace {

using avx512::u8;
using grouped512::Consts;

struct Madd {
  static constexpr float i8_offset = 128.0f;
  static __m512i i4(__m512i u, __m512i y, const Consts& c) { return _mm512_madd_epi16(_mm512_maddubs_epi16(u, y), c.ones16); }
  // Codes - 128 as signed bytes, so vpmaddubsw's pairs cannot saturate (|q - 128| <= 128).
  static __m512i i8_levels(__m512i v, const Consts& c) { return _mm512_xor_si512(v, c.k80); }
  static __m512i i8(__m512i u, __m512i y, const Consts&) { return avx512::dot_i8(u, y); }
};

constexpr int kFp8Block = 132;

// 16 codes -> the f16 bit patterns described above. E4M3: the code sign-extended to 16
// bits and shifted left by 7 has the sign in bit 15 and exponent and mantissa in bits
// 13..7, once bit 14 (a copy of the sign) is cleared.
template <bool E5M2>
inline __m256i fp8_to_f16(__m128i codes) {
  if constexpr (E5M2) return _mm256_slli_epi16(_mm256_cvtepu8_epi16(codes), 8);
  return _mm256_and_si256(_mm256_slli_epi16(_mm256_cvtepi8_epi16(codes), 7), _mm256_set1_epi16(static_cast<short>(0xbfff)));
}

// Whether an E4M3 block needs the exact slow path: a NaN code, or a scale whose product
// with 256 is not exact (NaN and infinite scales included; the slow path handles them all).
inline bool e4m3_slow(const u8* codes, float s) {
  const __m512i m7f = _mm512_set1_epi8(0x7f);
  const __mmask64 nan = _mm512_cmpeq_epi8_mask(_mm512_and_si512(_mm512_loadu_si512(codes), m7f), m7f) |
                        _mm512_cmpeq_epi8_mask(_mm512_and_si512(_mm512_loadu_si512(codes + 64), m7f), m7f);
  return nan != 0 || !(std::fabs(s) < 0x1p119f);
}

// 16 weights of an E4M3 block on the slow path: value * 256 exactly, then * s, NaN codes NaN.
inline __m512 e4m3_exact(__m128i codes, float s) {
  const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtph_ps(fp8_to_f16<false>(codes)), _mm512_set1_ps(256.0f)), _mm512_set1_ps(s));
  const __m128i m7f = _mm_set1_epi8(0x7f);
  const __mmask16 nan = _mm_cmpeq_epi8_mask(_mm_and_si128(codes, m7f), m7f);
  return _mm512_mask_mov_ps(v, nan, _mm512_set1_ps(NAN));
}

template <bool E5M2, int R>
void fp8_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  __m512 acc[R][4];
  for (int r = 0; r < R; ++r)
    for (auto& v : acc[r]) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < n / 128; ++b, wb += kFp8Block) {
    avx512::prefetch_ahead(wb);
    avx512::prefetch_ahead(wb + 64);
    avx512::prefetch_ahead(wb + 128);
    const float s = ld_f32(wb);
    const u8* codes = wb + 4;
    const bool slow = !E5M2 && e4m3_slow(codes, s);
    const __m512 sv = _mm512_set1_ps(E5M2 ? s : s * 256.0f);
    for (int j = 0; j < 8; ++j) {
      const __m128i c16 = grouped512::load128(codes + 16 * j);
      const __m512 w = slow ? e4m3_exact(c16, s) : _mm512_mul_ps(_mm512_cvtph_ps(fp8_to_f16<E5M2>(c16)), sv);
      for (int r = 0; r < R; ++r) {
        const auto* x = reinterpret_cast<const float*>(ab + r * stride) + 128 * b + 16 * j;
        acc[r][j & 3] = _mm512_fmadd_ps(w, _mm512_loadu_ps(x), acc[r][j & 3]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    out[r] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]), _mm512_add_ps(acc[r][2], acc[r][3])));
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

constexpr auto kIntegerEntries = grouped512::grouped_entries<Madd>();
constexpr KernelEntry kEntries[] = {
    kIntegerEntries[0], kIntegerEntries[1], kIntegerEntries[2], kIntegerEntries[3], kIntegerEntries[4], kIntegerEntries[5],
    {StorageType::FP8_E4M3_B128, {StorageType::F32, fp8_dot<false>, act_f32, Isa::avx512, fp8_dot4<false>}},
    {StorageType::FP8_E5M2_B128, {StorageType::F32, fp8_dot<true>, act_f32, Isa::avx512, fp8_dot4<true>}},
};

}  // namespace

constinit const KernelTable kAvx512Grouped{kEntries};

}  // namespace sy::cpu
