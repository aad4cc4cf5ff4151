// Small AVX2 helpers shared by the AVX2 kernels (included only by files built with -mavx2).
//
// The AVX2 units are built twice: for AVX2 + FMA + F16C, and once more with AVX-VNNI
// (-mavxvnni, Intel's consumer CPUs from Alder Lake on, AMD from Zen 5), where the integer
// multiply-adds below are one VNNI instruction each. Both builds compute the same integers
// (the kernels never pass vpmaddubsw a pair that saturates), so their results agree bit for
// bit; each build exports its tables under its own name (SY_AVX2_TABLE).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "dot_tables.hpp"

#if defined(__AVXVNNI__)
#define SY_AVX2_TABLE(name) name##Vnni
#else
#define SY_AVX2_TABLE(name) name
#endif

namespace sy::cpu {
// Internal linkage: a helper compiled with one unit's ISA flags must never be the copy that
// another unit (or the baseline code) links to (dot_tables.hpp).
namespace {
namespace avx2 {

/// The ISA the kernels of this build report.
#if defined(__AVXVNNI__)
constexpr Isa kUnitIsa = Isa::avx2vnni;
#else
constexpr Isa kUnitIsa = Isa::avx2;
#endif

// Weight bytes are prefetched this far ahead of the kernel, as in the AVX-512 kernels
// (simd_avx512.hpp says why): a GEMV streams rows from RAM faster than the hardware
// prefetchers alone fetch them. Prefetches never fault, so reading past a row's end is
// harmless. One call per 64 bytes consumed covers the stream.
inline constexpr size_t kAhead = 8192;
inline void prefetch_ahead(const void* p) { _mm_prefetch(static_cast<const char*>(p) + kAhead, _MM_HINT_T0); }

/// acc + the sums of four adjacent products of unsigned u and signed s bytes (8 x int32).
/// Without VNNI through vpmaddubsw, whose 16-bit pair sums saturate: callers keep every
/// pair within int16 (then both builds give the same integers).
inline __m256i dpbusd(__m256i acc, __m256i u, __m256i s) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

/// acc + the sums of adjacent products of 16-bit a and b (8 x int32), exact in both builds.
inline __m256i dpwssd(__m256i acc, __m256i a, __m256i b) {
#if defined(__AVXVNNI__)
  return _mm256_dpwssd_avx_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

inline float hsum(__m256 x) {
  __m128 r = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

/// Signed int8 x int8 over 32 lanes -> 8 int32 partial sums (maddubs needs an unsigned
/// first operand, so the signs move to y).
inline __m256i dot_i8(__m256i x, __m256i y) {
  return dpbusd(_mm256_setzero_si256(), _mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}

inline float f16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return _cvtsh_ss(v);
}

/// 16 packed bytes -> 32 nibbles in element order (low nibbles first, then high).
inline __m256i nibbles(const uint8_t* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0f);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

/// The 32 bits of `bits` as 32 bytes, 0xFF where the bit is set (bit i -> byte i).
inline __m256i bytes_from_bits(uint32_t bits) {
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i rep = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)), shuf);
  const __m256i sel = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  return _mm256_cmpeq_epi8(_mm256_and_si256(rep, sel), sel);
}

/// Horizontal sum of 8 int32.
inline int hsum_i32(__m256i v) {
  __m128i r = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  r = _mm_add_epi32(r, _mm_shuffle_epi32(r, 0x4e));
  r = _mm_add_epi32(r, _mm_shuffle_epi32(r, 0xb1));
  return _mm_cvtsi128_si32(r);
}

}  // namespace avx2
}  // namespace
}  // namespace sy::cpu
