// AVX-512 VNNI kernels for the interleaved layouts (quant.hpp's repack_rows()): Q4_K_X16
// and Q6_K_X16 against Q8_K activations, then Q4_0_X16 and Q8_0_X16 against Q8_0 ones at the end. One
// 64-byte load holds four quant bytes of each of 16 rows, so vpdpbusd with four broadcast activation bytes sums 16 rows at once: no
// per-row unpacking, horizontal sums or scale shuffles, which is what bounds the row-major
// Q4_K kernel below memory speed in decode. The scale words of 16 rows are unpacked
// together in 32-bit lanes, with the same bit recipe as the row-major kernels.
//
// Exact integer sums per super-block, then one f32 multiply-add per row and super-block,
// in the same order for every T: a row's result does not depend on how many tokens share
// the call.
#include <cstring>

#include "act_q8_sums.hpp"
#include "dot_avx512_vnni_common.hpp"
#include "x16_layout.hpp"

namespace sy::cpu {
namespace {

using avx512::u8;

using x16::BlockSums;
using x16::block_sums;

constexpr size_t kColumn = x16::kQ4kColumn;
// Every line is prefetched two columns (4.5 KiB) ahead (prefetch_ahead's reasoning; a
// shorter distance than the row kernels' measured best here). The hardware prefetchers
// alone kept a GEMV streaming from RAM at 18 GB/s on one core, against 52 GB/s from cache;
// with this, 29 GB/s on one core and 61 GB/s on two (gemv/Q4_K_X16, 512 MiB).
constexpr size_t kAheadX16 = 2 * kColumn;
constexpr size_t kQ8K = x16::kQ8K;

inline __m512i bcast32(const u8* p) {
  int v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

template <int T>
void q4k_x16(int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  const __m512i m4 = _mm512_set1_epi8(0x0f), low6 = _mm512_set1_epi32(0x3f3f3f3f), low4 = _mm512_set1_epi32(0x0f0f0f0f),
                low2 = _mm512_set1_epi32(0x03030303), byte = _mm512_set1_epi32(0xff),
                even16 = _mm512_set1_epi32(0x00ff00ff);
  const auto* wc = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t s = 0; s < n / 256; ++s, wc += kColumn, ab += kQ8K) {
    // Scale words of the 16 rows: sc03/sc47 hold scales 0-3 / 4-7 as bytes, mn03/mn47 the mins.
    const __m512i u0 = _mm512_loadu_si512(wc + 64), u1 = _mm512_loadu_si512(wc + 128), u2 = _mm512_loadu_si512(wc + 192);
    const __m512i sc03 = _mm512_and_si512(u0, low6);
    const __m512i sc47 = _mm512_or_si512(_mm512_and_si512(u2, low4), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(u0, 6), low2), 4));
    const __m512i mn03 = _mm512_and_si512(u1, low6);
    const __m512i mn47 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(u2, 4), low4),
                                         _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(u1, 6), low2), 4));
    __m512i sumi[T], msum[T];
    for (int t = 0; t < T; ++t) {
      const u8* at = ab + t * stride;
      const BlockSums bs = block_sums(at);
      // mins . block sums: lanes hold (m[b], m[b + 2]) as int16 pairs.
      __m512i m = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_and_si512(mn03, even16), _mm512_set1_epi32(bs.pair[0]));
      m = _mm512_dpwssd_epi32(m, _mm512_and_si512(_mm512_srli_epi32(mn03, 8), even16), _mm512_set1_epi32(bs.pair[1]));
      m = _mm512_dpwssd_epi32(m, _mm512_and_si512(mn47, even16), _mm512_set1_epi32(bs.pair[2]));
      msum[t] = _mm512_dpwssd_epi32(m, _mm512_and_si512(_mm512_srli_epi32(mn47, 8), even16), _mm512_set1_epi32(bs.pair[3]));
      sumi[t] = _mm512_setzero_si512();
    }
    const u8* q = wc + 256;
    for (int h = 0; h < 4; ++h) _mm_prefetch(reinterpret_cast<const char*>(wc + 64 * h + kAheadX16), _MM_HINT_T0);
    for (int p = 0; p < 4; ++p) {
      // Sub-blocks 2p (low nibbles) and 2p + 1 (high nibbles), 32 elements each.
      __m512i lo[T], hi[T];
      for (int t = 0; t < T; ++t) lo[t] = hi[t] = _mm512_setzero_si512();
      for (int c = 0; c < 8; ++c) {
        const __m512i v = _mm512_loadu_si512(q + 64 * (8 * p + c));
        _mm_prefetch(reinterpret_cast<const char*>(q + 64 * (8 * p + c) + kAheadX16), _MM_HINT_T0);
        const __m512i vl = _mm512_and_si512(v, m4), vh = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        for (int t = 0; t < T; ++t) {
          const u8* at = ab + t * stride + 4 + 64 * p + 4 * c;
          lo[t] = _mm512_dpbusd_epi32(lo[t], vl, bcast32(at));
          hi[t] = _mm512_dpbusd_epi32(hi[t], vh, bcast32(at + 32));
        }
      }
      const __m512i words = p < 2 ? sc03 : sc47;
      const int shift = 16 * (p % 2);
      const __m512i sl = _mm512_and_si512(_mm512_srli_epi32(words, shift), byte);
      const __m512i sh = _mm512_and_si512(_mm512_srli_epi32(words, shift + 8), byte);
      for (int t = 0; t < T; ++t)
        sumi[t] = _mm512_add_epi32(sumi[t], _mm512_add_epi32(_mm512_mullo_epi32(lo[t], sl), _mm512_mullo_epi32(hi[t], sh)));
    }
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wc)));
    const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wc + 32)));
    for (int t = 0; t < T; ++t) {
      float da;
      std::memcpy(&da, ab + t * stride, 4);
      const __m512 vda = _mm512_set1_ps(da);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, vda), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
      acc[t] = _mm512_fnmadd_ps(_mm512_mul_ps(dmin, vda), _mm512_cvtepi32_ps(msum[t]), acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(out[t], acc[t]);
}

// Q6_K_X16 (3360-byte columns: the 16 rows' d, then 52 words of ql, qh and scales in block
// order): the AVX2 kernel's partial sums and float steps (dot_avx2_x16.cpp says how the
// levels are found and why the floats are the row-major AVX2 Q6_K kernel's), 16 rows at once.
template <int T>
void q6k_x16(int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  constexpr size_t kCol = 3360;
  const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30), low16 = _mm512_set1_epi32(0xffff);
  const auto* wc = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[8][T];  // [partial][activation row]
  for (auto& part : acc)
    for (auto& v : part) v = _mm512_setzero_ps();
  for (int64_t s = 0; s < n / 256; ++s, wc += kCol, ab += kQ8K) {
    for (size_t l = 0; l < kCol; l += 64) _mm_prefetch(reinterpret_cast<const char*>(wc + l + kAheadX16), _MM_HINT_T0);
    const auto word = [&](int i) { return _mm512_loadu_si512(wc + 32 + 64 * i); };
    // The signed scale of each sub-block as the same int16 twice per lane, for vpdpwssd.
    __m512i scale[16];
    for (int sb = 0; sb < 16; ++sb) {
      const __m512i s32 = _mm512_srai_epi32(_mm512_slli_epi32(word(48 + sb / 4), 24 - 8 * (sb % 4)), 24);
      scale[sb] = _mm512_or_si512(_mm512_and_si512(s32, low16), _mm512_slli_epi32(s32, 16));
    }
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wc)));
    x16::Q6kSums bs[T];
    __m512 dd[T];
    for (int t = 0; t < T; ++t) {
      bs[t] = x16::q6k_sums(ab + t * stride);
      float da;
      std::memcpy(&da, ab + t * stride, 4);
      dd[t] = _mm512_mul_ps(d, _mm512_set1_ps(da));
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const __m512i sw = i % 2 ? _mm512_srli_epi32(word(48 + i / 2), 16) : word(48 + i / 2);
      const __m512i sc_pair = _mm512_mask_blend_epi16(0xAAAAAAAA, _mm512_srai_epi16(_mm512_slli_epi16(sw, 8), 8),
                                                      _mm512_slli_epi32(_mm512_srai_epi16(sw, 8), 16));
      __m512i sumi[T];
      for (int t = 0; t < T; ++t) sumi[t] = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int nb = 0; nb < 4; ++nb) {
        const int h = nb / 2, b = nb % 2;
        const __m512i q = word(16 * h + 8 * b + i), qh = word(32 + 8 * h + i);
        const __m512i ul = _mm512_or_si512(_mm512_and_si512(q, m4), _mm512_and_si512(_mm512_slli_epi16(qh, 4 - 2 * b), m30));
        const __m512i uh = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q, 4), m4),
                                           _mm512_and_si512(_mm512_srli_epi16(qh, 2 * b), m30));
        const int sb = 8 * h + 2 * b + i / 4;
        for (int t = 0; t < T; ++t) {
          const u8* at = ab + t * stride + 4 + 128 * h + 32 * b + 4 * i;
          sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(ul, bcast32(at)), scale[sb]);
          sumi[t] = _mm512_dpwssd_epi32(sumi[t], _mm512_maddubs_epi16(uh, bcast32(at + 64)), scale[sb + 4]);
        }
      }
      for (int t = 0; t < T; ++t) {
        const __m512i off = _mm512_madd_epi16(sc_pair, _mm512_set1_epi32(bs[t].pair[i]));
        const __m512i isum = _mm512_sub_epi32(sumi[t], _mm512_slli_epi32(off, 5));
        acc[i][t] = _mm512_fmadd_ps(dd[t], _mm512_cvtepi32_ps(isum), acc[i][t]);
      }
    }
  }
  for (int t = 0; t < T; ++t)
    _mm512_storeu_ps(out[t], _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0][t], acc[4][t]), _mm512_add_ps(acc[2][t], acc[6][t])),
                                           _mm512_add_ps(_mm512_add_ps(acc[1][t], acc[5][t]), _mm512_add_ps(acc[3][t], acc[7][t]))));
}

// Q4_0_X16 and Q8_0_X16 read Q8_0 activations in act_q8_0_sums' layout (act_q8_sums.hpp),
// 40 bytes a block: f32 d, the int32 sum of the block's 32 levels, then the levels. The
// sums take the weights' offset back (below); computed once per activation row rather than
// once per 16-row group, they leave 16 rows only vpdpbusd and one multiply-add per block
// (gemv/Q4_0_X16 from 512 MiB, 2 threads: 43-53 -> 60-68 GB/s).
constexpr size_t kQ8S = q8s::kBlock;

inline __m512 bcast_f32(const u8* p) {
  float v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_ps(v);
}

// Q4_0_X16 and Q8_0_X16 against those activations. A block column is the 16 rows' f16 d,
// then 64-byte words holding four quant bytes of each row. Levels are made unsigned for
// vpdpbusd (Q4_0: the nibble, level + 8; Q8_0: the byte xor 0x80, level + 128), and the
// offset comes back as offset * sum(y), one sum per activation block shared by the 16 rows.
// Q4_0's word c holds elements 4c..4c+3 in its low nibbles and 16+4c..16+4c+3 in its high
// ones. Exact integer sums per block, then one f32 multiply-add per row and block, the same
// for every T.
template <bool Q4, int T>
void q0_x16(int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  constexpr size_t kCol = Q4 ? 288 : 544;
  constexpr int kWords = Q4 ? 4 : 8;
  constexpr int kOffsetShift = Q4 ? 3 : 7;  // offset 8 or 128
  const __m512i m4 = _mm512_set1_epi8(0x0f), k80 = _mm512_set1_epi8(static_cast<char>(0x80));
  const auto* wc = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t s = 0; s < n / 32; ++s, wc += kCol, ab += kQ8S) {
    for (size_t l = 0; l < kCol; l += 64) _mm_prefetch(reinterpret_cast<const char*>(wc + l + kAheadX16), _MM_HINT_T0);
    __m512i sum0[T], sum1[T];  // two dependency chains
    for (int t = 0; t < T; ++t) sum0[t] = sum1[t] = _mm512_setzero_si512();
    for (int c = 0; c < kWords; ++c) {
      const __m512i v = _mm512_loadu_si512(wc + 32 + 64 * c);
      if constexpr (Q4) {
        const __m512i vl = _mm512_and_si512(v, m4), vh = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        for (int t = 0; t < T; ++t) {
          const u8* at = ab + t * stride + 8 + 4 * c;
          sum0[t] = _mm512_dpbusd_epi32(sum0[t], vl, bcast32(at));
          sum1[t] = _mm512_dpbusd_epi32(sum1[t], vh, bcast32(at + 16));
        }
      } else {
        const __m512i u = _mm512_xor_si512(v, k80);
        for (int t = 0; t < T; ++t) {
          __m512i& sum = c % 2 ? sum1[t] : sum0[t];
          sum = _mm512_dpbusd_epi32(sum, u, bcast32(ab + t * stride + 8 + 4 * c));
        }
      }
    }
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wc)));
    for (int t = 0; t < T; ++t) {
      const u8* at = ab + t * stride;
      const __m512i offset = _mm512_slli_epi32(bcast32(at + 4), kOffsetShift);
      const __m512i isum = _mm512_sub_epi32(_mm512_add_epi32(sum0[t], sum1[t]), offset);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, bcast_f32(at)), _mm512_cvtepi32_ps(isum), acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(out[t], acc[t]);
}

constexpr KernelEntry kEntries[] = {
    {StorageType::Q4_K_X16,
     {.act_type = StorageType::Q8_K, .quantize_act = act_q8_k, .isa = Isa::avx512, .group1 = q4k_x16<1>, .group4 = q4k_x16<4>}},
    {StorageType::Q6_K_X16,
     {.act_type = StorageType::Q8_K, .quantize_act = act_q8_k, .isa = Isa::avx512, .group1 = q6k_x16<1>, .group4 = q6k_x16<4>}},
    {StorageType::Q4_0_X16,
     {.act_type = StorageType::Q8_0, .quantize_act = act_q8_0_sums, .isa = Isa::avx512, .group1 = q0_x16<true, 1>,
      .group4 = q0_x16<true, 4>, .act_bytes = act_q8_0_sums_bytes}},
    {StorageType::Q8_0_X16,
     {.act_type = StorageType::Q8_0, .quantize_act = act_q8_0_sums, .isa = Isa::avx512, .group1 = q0_x16<false, 1>,
      .group4 = q0_x16<false, 4>, .act_bytes = act_q8_0_sums_bytes}},
};

}  // namespace

constinit const KernelTable kAvx512VnniX16{kEntries};

}  // namespace sy::cpu
