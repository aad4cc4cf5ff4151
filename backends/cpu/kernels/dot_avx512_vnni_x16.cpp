// AVX-512 VNNI kernels for the interleaved layouts (quant.hpp's repack_rows()): Q4_K_X16
// against Q8_K activations, then Q4_0_X16 and Q8_0_X16 against Q8_0 ones at the end. One
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

namespace sy::cpu {
namespace {

using avx512::u8;

constexpr size_t kColumn = 2304;  // one super-block column of 16 rows
// Every line is prefetched two columns (4.5 KiB) ahead (prefetch_ahead's reasoning; a
// shorter distance than the row kernels' measured best here). The hardware prefetchers
// alone kept a GEMV streaming from RAM at 18 GB/s on one core, against 52 GB/s from cache;
// with this, 29 GB/s on one core and 61 GB/s on two (gemv/Q4_K_X16, 512 MiB).
constexpr size_t kAheadX16 = 2 * kColumn;
constexpr size_t kQ8K = 292;      // f32 d, 256 int8, 16 int16 block sums

inline __m512i bcast32(const u8* p) {
  int v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// int16 pairs (s[b], s[b + 2]) of the 32-element block sums of one activation super-block,
// for vpdpwssd against the mins (which come as pairs (m[b], m[b + 2]) per 32-bit lane).
struct BlockSums {
  int pair[4];  // b = 0, 1, 4, 5
};
inline BlockSums block_sums(const u8* a) {
  int16_t bs[16];
  std::memcpy(bs, a + 260, sizeof bs);
  int s[8];
  for (int b = 0; b < 8; ++b) s[b] = bs[2 * b] + bs[2 * b + 1];
  const auto pack = [&](int lo, int hi) {
    return static_cast<int>(static_cast<uint16_t>(s[lo]) | static_cast<uint32_t>(static_cast<uint16_t>(s[hi])) << 16);
  };
  return {{pack(0, 2), pack(1, 3), pack(4, 6), pack(5, 7)}};
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
