// K-quant scale work of kquant_scales.hpp in vector operations (included only by files built
// with AVX2 or later): the Q3_K scale unpacking, and the Q4_K/Q5_K min terms. The scalar loop's sixteen byte stores, read back as a
// vector, stalled store-to-load forwarding once per super-block.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kquant_scales.hpp"

namespace sy::cpu {
// Internal linkage: a helper compiled with one unit's ISA flags must never be the copy that
// another unit (or the baseline code) links to (dot_tables.hpp).
namespace {

/// The 16 signed scales of a Q3_K super-block (12 packed bytes) as int8, in group order.
inline __m128i q3k_scales_i8(const uint8_t* p) {
  uint64_t lo8;
  uint32_t hi4;
  std::memcpy(&lo8, p, 8);
  std::memcpy(&hi4, p + 8, 4);
  const __m128i a = _mm_cvtsi64_si128(static_cast<long long>(lo8));
  const __m128i m4 = _mm_set1_epi8(0x0f);
  // Groups 0..7: low nibbles of bytes 0..7; groups 8..15: their high nibbles.
  const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(a, m4), _mm_and_si128(_mm_srli_epi16(a, 4), m4));
  // Group g: bits 2(g/4), 2(g/4)+1 of byte 8 + g%4.
  const __m128i h = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(static_cast<int>(hi4)), _mm_setr_epi32(0, 2, 4, 6)),
                                  _mm_set1_epi8(3));
  return _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(h, 4)), _mm_set1_epi8(32));
}

/// The 8 sub-blocks' min_j * (bsum[2j] + bsum[2j+1]) of a Q4_K/Q5_K super-block against
/// Q8_K block sums, in one madd, as 8 lanes the caller accumulates in a vector (a horizontal
/// sum per super-block cost more than its madd). The mins come from registers (words 2 and 3
/// of the unpacked scales), not from a stack copy.
inline __m256 k4_min_terms(const ScaleMinWords& u, const uint8_t* bsums) {
  const __m128i m8 = _mm_set_epi32(0, 0, static_cast<int>(u.w[3]), static_cast<int>(u.w[2]));
  const __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));  // each min twice: one per bsum
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(m16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums))));
}

}  // namespace
}  // namespace sy::cpu
