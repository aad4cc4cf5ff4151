// Small AVX-512 helpers shared by the AVX-512 kernels (included only by files built with
// the AVX-512 flags).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "dot_tables.hpp"

namespace sy::cpu {
// Internal linkage: a helper compiled with one unit's ISA flags must never be the copy that
// another unit (or the baseline code) links to (dot_tables.hpp).
namespace {
namespace avx512 {

using u8 = uint8_t;

// Weight bytes are prefetched this far ahead of the kernel. A GEMV streams its rows from
// RAM one after another, and these kernels compute faster than the hardware prefetchers
// alone fetch: gemv/Q6_K from 512 MiB went from 21.8 to 27.5 GB/s on one core and 41.8 to
// 52.6 on two (Zen 5). Prefetches never fault, so reading ahead past a row's or the
// matrix's end is harmless. One call per 64 bytes consumed covers the stream.
inline constexpr size_t kAhead = 8192;
inline void prefetch_ahead(const void* p) { _mm_prefetch(static_cast<const char*>(p) + kAhead, _MM_HINT_T0); }

inline float f16(const u8* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return _cvtsh_ss(v);
}

// Signed int8 x int8 over 64 lanes -> 16 int32 sums; AVX-512 has no sign_epi8, so y is
// negated where x is negative and x replaced by |x|.
inline __m512i dot_i8(__m512i x, __m512i y) {
  const __mmask64 neg = _mm512_movepi8_mask(x);
  const __m512i ax = _mm512_abs_epi8(x);
  const __m512i sy = _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y);
  return _mm512_madd_epi16(_mm512_maddubs_epi16(ax, sy), _mm512_set1_epi16(1));
}

inline __m512i join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
inline __m512 join(float lo, float hi) {
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_set1_ps(lo))), _mm256_castps_pd(_mm256_set1_ps(hi)), 1));
}

/// 16 packed bytes -> 32 nibbles in element order (low nibbles first, then high).
inline __m256i nibbles(const u8* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0f);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

}  // namespace avx512
}  // namespace
}  // namespace sy::cpu
