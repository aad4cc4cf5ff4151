// AVX-512 VNNI kernels of I4_G32_X16, I4_G64_X16 and I4_G128_X16 (quant.hpp's
// repack_rows()): AWQ/GPTQ 4-bit weights with 16 rows interleaved, against the same grouped
// Q8_0 activations as the row-major I4_G* kernels (act_q8_0_gsums), so gate/up and q/k/v
// still share one conversion, interleaved or not.
//
// One 64-byte load holds a code word of each of the 16 rows; vpdpbusd multiplies the
// unsigned nibbles with signed levels directly, so the codes need no offset and the zero
// point comes back once per group through the activation row's group sum:
//   row = sum_g d * (sum_b da_b * dot(q, y_b) - z * sum_b da_b * sum(y_b)).
// Exact integer sums per 32-element block, then per group and row a few f32 multiply-adds
// in the same order for every T: a row's result does not depend on its batch.
#include <cstring>

#include "act_q8_sums.hpp"
#include "dot_tables.hpp"
#include "simd_avx512.hpp"

namespace sy::cpu {
namespace {

using avx512::u8;

// Prefetch distance in bytes, the Q4_0_X16 kernel's (two Q4_K_X16 columns): about four
// I4_G128 columns ahead.
constexpr size_t kAhead = 4608;

inline __m512i bcast32(const u8* p) {
  int v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

inline __m512 bcast_f32(const u8* p) {
  float v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_ps(v);
}

// A group column is the 16 rows' f16 d, their f16 z, then G/8 words of four code bytes per
// row. Word c holds elements 4c..4c+3 in its low nibbles and G/2 + 4c.. in its high ones,
// so for G >= 64 the low nibbles fill the group's first half of 32-element blocks and the
// high ones the second; for G = 32 both halves are the one block.
template <int G, int T>
void i4g_x16(int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  constexpr int kWords = G / 8;
  constexpr size_t kCol = 16 * (4 + G / 2);
  constexpr int kBlocks = G / 32;
  constexpr int kHalf = kBlocks == 1 ? 1 : kBlocks / 2;  // integer sums per nibble half
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  const auto* wc = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  const size_t scales = q8g::scales_offset(n), gsums = q8g::group_sums_offset(n, G);
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t g = 0; g < n / G; ++g, wc += kCol) {
    for (size_t l = 0; l < kCol; l += 64) _mm_prefetch(reinterpret_cast<const char*>(wc + l + kAhead), _MM_HINT_T0);
    __m512i lo[T][kHalf], hi[T][kHalf];
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < kHalf; ++j) lo[t][j] = hi[t][j] = _mm512_setzero_si512();
    const u8* y = ab + g * G;  // the group's levels
    // Unrolled so that the sums stay in registers (indexed by c / 8, they went to the stack).
#pragma GCC unroll 16
    for (int c = 0; c < kWords; ++c) {
      const __m512i v = _mm512_loadu_si512(wc + 64 + 64 * c);
      const __m512i vl = _mm512_and_si512(v, m4), vh = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
      const int j = c / 8;  // 8 words are one 32-element block
      for (int t = 0; t < T; ++t) {
        const u8* yt = y + t * stride + 4 * c;
        lo[t][j] = _mm512_dpbusd_epi32(lo[t][j], vl, bcast32(yt));
        hi[t][j] = _mm512_dpbusd_epi32(hi[t][j], vh, bcast32(yt + G / 2));
      }
    }
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wc)));
    const __m512 z = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wc + 32)));
    for (int t = 0; t < T; ++t) {
      const u8* at = ab + t * stride;
      const u8* sc = at + scales + 32 * static_cast<size_t>(g * kBlocks);  // block b's scale at sc + 32 b
      __m512 part;  // sum_b da_b * dot(q, y_b), blocks in order
      if constexpr (kBlocks == 1) {
        part = _mm512_mul_ps(bcast_f32(sc), _mm512_cvtepi32_ps(_mm512_add_epi32(lo[t][0], hi[t][0])));
      } else {
        part = _mm512_mul_ps(bcast_f32(sc), _mm512_cvtepi32_ps(lo[t][0]));
        for (int j = 1; j < kHalf; ++j) part = _mm512_fmadd_ps(bcast_f32(sc + 32 * j), _mm512_cvtepi32_ps(lo[t][j]), part);
        for (int j = 0; j < kHalf; ++j)
          part = _mm512_fmadd_ps(bcast_f32(sc + 32 * (kHalf + j)), _mm512_cvtepi32_ps(hi[t][j]), part);
      }
      part = _mm512_fnmadd_ps(z, bcast_f32(at + gsums + 4 * static_cast<size_t>(g)), part);
      acc[t] = _mm512_fmadd_ps(d, part, acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(out[t], acc[t]);
}

template <int G>
constexpr DotKernel kernel() {
  return {.act_type = StorageType::Q8_0, .quantize_act = act_q8_0_gsums, .isa = Isa::avx512, .group1 = i4g_x16<G, 1>,
          .group4 = i4g_x16<G, 4>, .act_bytes = act_q8_0_gsums_bytes};
}

constexpr KernelEntry kEntries[] = {
    {StorageType::I4_G32_X16, kernel<32>()},
    {StorageType::I4_G64_X16, kernel<64>()},
    {StorageType::I4_G128_X16, kernel<128>()},
};

}  // namespace

constinit const KernelTable kAvx512VnniI4x16{kEntries};

}  // namespace sy::cpu
