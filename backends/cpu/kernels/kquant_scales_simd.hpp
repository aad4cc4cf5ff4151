// The Q3_K scale unpacking of kquant_scales.hpp in a few vector operations (included only
// by files built with AVX2 or later). The scalar loop's sixteen byte stores, read back as a
// vector, stalled store-to-load forwarding once per super-block.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

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

}  // namespace
}  // namespace sy::cpu
