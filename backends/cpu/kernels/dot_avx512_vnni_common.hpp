// Helpers shared by the AVX-512 VNNI kernels (included only by files built with
// -mavx512vnni): block-pair unpacking that keeps the shuffle ports free, and half-precision
// scales converted several at a time.
#pragma once

#include <cstring>

#include "simd_avx512.hpp"

namespace sy::cpu {
// Internal linkage: a helper compiled with one unit's ISA flags must never be the copy that
// another unit (or the baseline code) links to (dot_tables.hpp).
namespace {
namespace avx512_vnni {

using avx512::u8;

/// Constants the kernels build once per call (cheaper than a function-local static's
/// guard, and the compiler keeps them in registers across the loop).
struct Consts {
  __m512i m4 = _mm512_set1_epi8(0x0f);
  __m512i k80 = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i k10 = _mm512_set1_epi8(0x10);
  // Shift counts per 128-bit lane (0, 4, 0, 4): a block's 16 packed bytes broadcast to two
  // lanes give its low nibbles, then its high nibbles.
  __m512i nib_shift = _mm512_broadcast_i64x4(_mm256_set_m128i(_mm_set1_epi16(4), _mm_setzero_si128()));
  // The IQ4 levels + 128, unsigned.
  __m512i iq4_u = _mm512_broadcast_i32x4(_mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, static_cast<char>(129),
                                                       static_cast<char>(141), static_cast<char>(153),
                                                       static_cast<char>(166), static_cast<char>(181),
                                                       static_cast<char>(197), static_cast<char>(217),
                                                       static_cast<char>(241)));
  // Float lane permutations: element 0 to lanes 0..7 and element 1 to 8..15; likewise 2, 3.
  __m512i idx01 = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  __m512i idx23 = _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2);
};

inline uint64_t ld16(const u8* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline __m256i load256(const u8* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m128i load128(const u8* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }

/// Two blocks of 16 packed bytes -> 64 nibbles: bytes 0..15 the low nibbles of p0, 16..31
/// its high nibbles, 32..63 the same for p1 (the element order of two Q8_0 blocks).
inline __m512i nibbles2(const u8* p0, const u8* p1, const Consts& c) {
  const __m512i b = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(load128(p0)), 0xff00, load128(p1));
  return _mm512_and_si512(_mm512_srlv_epi16(b, c.nib_shift), c.m4);
}

/// Adds 16 to the levels whose bit is set in the two blocks' 32-bit high-bit words.
inline __m512i high_bits(__m512i u, const u8* qh0, const u8* qh1, const Consts& c) {
  uint32_t h0, h1;
  std::memcpy(&h0, qh0, 4);
  std::memcpy(&h1, qh1, 4);
  return _mm512_mask_add_epi8(u, static_cast<__mmask64>(h0 | (uint64_t{h1} << 32)), u, c.k10);
}

/// The f16 values at p0 and p1 in lanes 0 and 1 (lanes 2, 3 zero).
inline __m128 f16x2(const u8* p0, const u8* p1) {
  return _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(ld16(p0) | ld16(p1) << 16)));
}

/// Lanes 0..7 take p[0], lanes 8..15 p[1].
inline __m512 spread2(__m128 p, const Consts& c) { return _mm512_permutexvar_ps(c.idx01, _mm512_castps128_ps512(p)); }

/// d_w * d_a of two blocks (f16 scales at the blocks' starts), spread as spread2 does.
inline __m512 scales2(const u8* w0, const u8* w1, const u8* a0, const u8* a1, const Consts& c) {
  const uint64_t bits = ld16(w0) | ld16(w1) << 16 | ld16(a0) << 32 | ld16(a1) << 48;
  const __m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(bits)));  // w0 w1 a0 a1
  return spread2(_mm_mul_ps(f, _mm_movehl_ps(f, f)), c);
}

/// Affine blocks (f16 d then f16 m): d_w * d_a and m_w * d_a of two blocks, spread.
inline void scales2_affine(const u8* w0, const u8* w1, const u8* a0, const u8* a1, const Consts& c, __m512& d,
                           __m512& m) {
  const uint64_t lo = ld16(w0) | ld16(w1) << 16 | ld16(w0 + 2) << 32 | ld16(w1 + 2) << 48;
  const uint64_t da = ld16(a0) | ld16(a1) << 16;
  const __m256 f = _mm256_cvtph_ps(_mm_set_epi64x(static_cast<long long>(da | da << 32), static_cast<long long>(lo)));
  const __m128 p = _mm_mul_ps(_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1));  // dw0da0 dw1da1 mw0da0 mw1da1
  d = _mm512_permutexvar_ps(c.idx01, _mm512_castps128_ps512(p));
  m = _mm512_permutexvar_ps(c.idx23, _mm512_castps128_ps512(p));
}

}  // namespace avx512_vnni
}  // namespace
}  // namespace sy::cpu
