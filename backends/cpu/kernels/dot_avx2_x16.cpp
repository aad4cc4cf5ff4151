// AVX2 kernels for the interleaved layouts (quant.hpp's repack_rows()): Q4_K_X16 and
// Q6_K_X16 against Q8_K activations, Q4_0_X16 and Q8_0_X16 against Q8_0 ones with block
// sums. Built with AVX2 + FMA + F16C and again with AVX-VNNI (simd_avx2.hpp). A 64-byte word
// of a column holds four quant bytes of each of 16 rows; a 256-bit register takes the half of
// it that belongs to rows 0-7 or 8-15, so four broadcast activation bytes meet eight rows at
// once, with no per-row unpacking or horizontal sums (what keeps the row-major Q4_K kernel
// below memory speed on two cores).
//
// The integers are exact, and each row's floats are computed in one order on every ISA (the
// AVX-512 VNNI kernels', dot_avx512_vnni_x16.cpp; for Q6_K_X16 the row-major AVX2 kernel's,
// below): every ISA gives the same bits for these layouts, and a row's result does not
// depend on how many tokens share the call.
#include <cstring>

#include "act_q8_sums.hpp"
#include "simd_avx2.hpp"
#include "x16_layout.hpp"

namespace sy::cpu {
namespace {

using namespace avx2;
using u8 = uint8_t;

constexpr size_t kColumn = x16::kQ4kColumn;
constexpr size_t kAheadX16 = 2 * kColumn;  // as the AVX-512 kernels (their measurement)
constexpr size_t kQ8S = q8s::kBlock;

inline __m256i bcast32(const u8* p) {
  int v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

inline __m256i ld(const u8* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

inline __m256 f16x8(const u8* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

// vpshufb controls that copy byte j (0..3) of each 32-bit lane into both 16-bit halves of
// the lane: into their low bytes (an unsigned scale, ready for vpmaddwd) or their high bytes
// (a signed one, sign-extended by a 16-bit arithmetic shift). Constant data, so choosing one
// at run time is a load, not a vector built byte by byte.
struct SpreadCtrl {
  alignas(32) int8_t low[4][32];
  alignas(32) int8_t high[4][32];
};
constexpr SpreadCtrl make_spread() {
  SpreadCtrl c{};
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 32; ++i) {
      const auto src = static_cast<int8_t>(4 * ((i % 16) / 4) + j);
      const bool low_byte = i % 2 == 0;
      c.low[j][i] = low_byte ? src : int8_t{-128};
      c.high[j][i] = low_byte ? int8_t{-128} : src;
    }
  return c;
}
constexpr SpreadCtrl kSpread = make_spread();
inline __m256i spread_ctrl(const int8_t (&table)[4][32], int j) { return ld(reinterpret_cast<const u8*>(table[j])); }

inline void prefetch_column(const u8* col, size_t bytes) {
  for (size_t l = 0; l < bytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(col + l + kAheadX16), _MM_HINT_T0);
}

// Without VNNI the nibble products are summed in 16 bits over a sub-block's eight words
// (at most 8 x 2 x 15 x 127 = 30480, so vpmaddubsw never saturates) and the sub-block scale
// is applied by one vpmaddwd; with VNNI, vpdpbusd sums in 32 bits and the scale is a 32-bit
// multiply. Both give the same integers.
inline __m256i sub_add(__m256i s, __m256i u, __m256i a) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(s, u, a);  // int32 sums
#else
  return _mm256_add_epi16(s, _mm256_maddubs_epi16(u, a));  // int16 pair sums
#endif
}

// Q4_K_X16: rows 8h..8h+7 of one super-block column against T activation rows, into
// acc[t]. The scale words hold, per 32-bit lane (one row), scales 0-3 / 4-7 or mins 0-3 /
// 4-7 as bytes, unpacked with the bit recipe of the row-major kernels.
template <int T>
void q4k_half(const u8* wc, int h, const u8* ab, size_t stride, const x16::BlockSums* bs, __m256* acc) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), low6 = _mm256_set1_epi32(0x3f3f3f3f), low4 = _mm256_set1_epi32(0x0f0f0f0f),
                low2 = _mm256_set1_epi32(0x03030303), even16 = _mm256_set1_epi32(0x00ff00ff);
  const u8* c = wc + 32 * h;
  const __m256i u0 = ld(c + 64), u1 = ld(c + 128), u2 = ld(c + 192);
  const __m256i sc03 = _mm256_and_si256(u0, low6);
  const __m256i sc47 = _mm256_or_si256(_mm256_and_si256(u2, low4), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(u0, 6), low2), 4));
  __m256i sumi[T];
  for (int t = 0; t < T; ++t) sumi[t] = _mm256_setzero_si256();
  const u8* q = c + 256;
  // Unrolled whole, so every offset and shift count is a constant.
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    // Sub-blocks 2p (low nibbles) and 2p + 1 (high nibbles), 32 elements each.
    __m256i lo[T], hi[T];
    for (int t = 0; t < T; ++t) lo[t] = hi[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const __m256i v = ld(q + 64 * (8 * p + i));
      const __m256i vl = _mm256_and_si256(v, m4), vh = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
      for (int t = 0; t < T; ++t) {
        const u8* at = ab + t * stride + 4 + 64 * p + 4 * i;
        lo[t] = sub_add(lo[t], vl, bcast32(at));
        hi[t] = sub_add(hi[t], vh, bcast32(at + 32));
      }
    }
    const __m256i words = p < 2 ? sc03 : sc47;
    const int byte = 2 * (p % 2);  // the low sub-block's scale byte in each lane
#if defined(__AVXVNNI__)
    const __m256i mask = _mm256_set1_epi32(0xff);
    const __m256i sl = _mm256_and_si256(_mm256_srli_epi32(words, 8 * byte), mask);
    const __m256i sh = _mm256_and_si256(_mm256_srli_epi32(words, 8 * byte + 8), mask);
    for (int t = 0; t < T; ++t)
      sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(_mm256_mullo_epi32(lo[t], sl), _mm256_mullo_epi32(hi[t], sh)));
#else
    // The scale byte to both 16-bit halves of its lane: vpmaddwd then multiplies and sums
    // the lane's two pair sums in one step.
    const __m256i sl = _mm256_shuffle_epi8(words, spread_ctrl(kSpread.low, byte));
    const __m256i sh = _mm256_shuffle_epi8(words, spread_ctrl(kSpread.low, byte + 1));
    for (int t = 0; t < T; ++t)
      sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(_mm256_madd_epi16(lo[t], sl), _mm256_madd_epi16(hi[t], sh)));
#endif
  }
  // mins . block sums: lanes hold (m[b], m[b + 2]) as int16 pairs.
  const __m256i mn03 = _mm256_and_si256(u1, low6);
  const __m256i mn47 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(u2, 4), low4),
                                       _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(u1, 6), low2), 4));
  const __m256 d = f16x8(wc + 16 * h), dmin = f16x8(wc + 32 + 16 * h);
  for (int t = 0; t < T; ++t) {
    __m256i m = dpwssd(_mm256_setzero_si256(), _mm256_and_si256(mn03, even16), _mm256_set1_epi32(bs[t].pair[0]));
    m = dpwssd(m, _mm256_and_si256(_mm256_srli_epi32(mn03, 8), even16), _mm256_set1_epi32(bs[t].pair[1]));
    m = dpwssd(m, _mm256_and_si256(mn47, even16), _mm256_set1_epi32(bs[t].pair[2]));
    m = dpwssd(m, _mm256_and_si256(_mm256_srli_epi32(mn47, 8), even16), _mm256_set1_epi32(bs[t].pair[3]));
    float da;
    std::memcpy(&da, ab + t * stride, 4);
    const __m256 vda = _mm256_set1_ps(da);
    acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, vda), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
    acc[t] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, vda), _mm256_cvtepi32_ps(m), acc[t]);
  }
}

template <int T>
void q4k_x16(int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  const auto* wc = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc[2][T];
  for (auto& half : acc)
    for (auto& v : half) v = _mm256_setzero_ps();
  for (int64_t s = 0; s < n / 256; ++s, wc += kColumn, ab += x16::kQ8K) {
    prefetch_column(wc, kColumn);
    x16::BlockSums bs[T];
    for (int t = 0; t < T; ++t) bs[t] = x16::block_sums(ab + t * stride);
    q4k_half<T>(wc, 0, ab, stride, bs, acc[0]);
    q4k_half<T>(wc, 1, ab, stride, bs, acc[1]);
  }
  for (int t = 0; t < T; ++t) {
    _mm256_storeu_ps(out[t], acc[0][t]);
    _mm256_storeu_ps(out[t] + 8, acc[1][t]);
  }
}

// Q6_K_X16 (3360-byte columns: the 16 rows' d, then 52 words of ql, qh and scales in block
// order): rows 8h..8h+7 against T activation rows. A level + 32 (0..63) is a nibble of ql
// with two bits of qh above it: for elements 128n + 32b + 4i (low nibbles of ql word
// 16n + 8b + i) and 64 further on (its high nibbles), qh word 32 + 8n + i holds the bits at
// 2b and 4 + 2b.
//
// The floats are the row-major AVX2 Q6_K kernel's (dot_avx2.cpp's q6_k_rows), bit for bit:
// its 32-bit lane j sums, per super-block, the elements 4j..4j+3 of every 32-element chunk
// with their sub-block scales, less 32 x (scale x block sum) of sub-blocks 2j and 2j + 1;
// each lane takes one f32 multiply-add per super-block, and the lanes are added in hsum's
// order at the end. Here partial j comes from words i = j, so acc[j] per row is that lane.
// Fixture logits depend on it: the exact sum in one f32 per super-block rounds differently
// and flipped a near-tied expert choice in a shared fixture (0.10 -> 0.63 at one step).
template <int T>
void q6k_half(const u8* wc, int h, const u8* ab, size_t stride, __m256 (*acc)[T]) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
  const u8* c = wc + 32 + 32 * h;
  const auto word = [&](int w) { return ld(c + 64 * w); };
  // The signed scale of each sub-block as the same int16 twice per lane, for vpmaddwd.
  __m256i scale[16];
  for (int sb = 0; sb < 16; ++sb)
    scale[sb] = _mm256_srai_epi16(_mm256_shuffle_epi8(word(48 + sb / 4), spread_ctrl(kSpread.high, sb % 4)), 8);
  const __m256 d = f16x8(wc + 16 * h);
  x16::Q6kSums bs[T];
  __m256 dd[T];
  for (int t = 0; t < T; ++t) {
    bs[t] = x16::q6k_sums(ab + t * stride);
    float da;
    std::memcpy(&da, ab + t * stride, 4);
    dd[t] = _mm256_mul_ps(d, _mm256_set1_ps(da));
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    // The offset of partial i: 32 x (sc[2i] x s[2i] + sc[2i + 1] x s[2i + 1]), with the two
    // scales as sign-extended int16 halves of each lane.
    const __m256i sw = i % 2 ? _mm256_srli_epi32(word(48 + i / 2), 16) : word(48 + i / 2);
    const __m256i sc_pair = _mm256_blend_epi16(_mm256_srai_epi16(_mm256_slli_epi16(sw, 8), 8),
                                               _mm256_slli_epi32(_mm256_srai_epi16(sw, 8), 16), 0xAA);
    __m256i sumi[T];
    for (int t = 0; t < T; ++t) sumi[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int nb = 0; nb < 4; ++nb) {
      const int n = nb / 2, b = nb % 2;
      const __m256i q = word(16 * n + 8 * b + i), qh = word(32 + 8 * n + i);
      const __m256i ul = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4 - 2 * b), m30));
      const __m256i uh = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                                         _mm256_and_si256(_mm256_srli_epi16(qh, 2 * b), m30));
      const int sb = 8 * n + 2 * b + i / 4;  // the low nibbles' sub-block; the high ones' is 4 further
      for (int t = 0; t < T; ++t) {
        const u8* at = ab + t * stride + 4 + 128 * n + 32 * b + 4 * i;
        // 2 x 63 x 127 per 16-bit pair at most: vpmaddubsw never saturates.
        sumi[t] = dpwssd(sumi[t], _mm256_maddubs_epi16(ul, bcast32(at)), scale[sb]);
        sumi[t] = dpwssd(sumi[t], _mm256_maddubs_epi16(uh, bcast32(at + 64)), scale[sb + 4]);
      }
    }
    for (int t = 0; t < T; ++t) {
      const __m256i off = _mm256_madd_epi16(sc_pair, _mm256_set1_epi32(bs[t].pair[i]));
      const __m256i isum = _mm256_sub_epi32(sumi[t], _mm256_slli_epi32(off, 5));
      acc[i][t] = _mm256_fmadd_ps(dd[t], _mm256_cvtepi32_ps(isum), acc[i][t]);
    }
  }
}

// The partials added in the row-major kernels' hsum order: ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)).
inline __m256 lanes_sum(const __m256* a) {
  return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6])),
                       _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7])));
}

template <int T>
void q6k_x16(int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  constexpr size_t kCol = 3360;
  const auto* wc = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc[2][8][T];  // [half][partial][activation row]
  for (auto& half : acc)
    for (auto& part : half)
      for (auto& v : part) v = _mm256_setzero_ps();
  for (int64_t s = 0; s < n / 256; ++s, wc += kCol, ab += x16::kQ8K) {
    prefetch_column(wc, kCol);
    q6k_half<T>(wc, 0, ab, stride, acc[0]);
    q6k_half<T>(wc, 1, ab, stride, acc[1]);
  }
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < 2; ++h) {
      __m256 parts[8];
      for (int i = 0; i < 8; ++i) parts[i] = acc[h][i][t];
      _mm256_storeu_ps(out[t] + 8 * h, lanes_sum(parts));
    }
}

// Q4_0_X16 and Q8_0_X16 against act_q8_0_sums' blocks (act_q8_sums.hpp): a column is the 16
// rows' f16 d, then 64-byte words of four quant bytes per row (Q4_0's word i: elements
// 4i..4i+3 in the low nibbles, 16+4i.. in the high ones). Q4_0's nibble is its level + 8;
// the offset comes back as 8 x the block's activation sum. Q8_0 without VNNI moves the
// weight's sign onto the activation (|w| <= 128 and |a| <= 127 keep vpmaddubsw's pairs
// within int16); with VNNI it is made unsigned (w + 128) and the offset comes back through
// the sum, as in the AVX-512 kernel.
template <bool Q4>
inline __m256i q0_block_half(const u8* c, const u8* at) {
  constexpr int kWords = Q4 ? 4 : 8;
  __m256i sum = _mm256_setzero_si256();
  if constexpr (Q4) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (int i = 0; i < kWords; ++i) {
      const __m256i v = ld(c + 64 * i);
      sum = sub_add(sum, _mm256_and_si256(v, m4), bcast32(at + q8s::kLevels + 4 * i));
      sum = sub_add(sum, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4), bcast32(at + q8s::kLevels + 16 + 4 * i));
    }
#if !defined(__AVXVNNI__)
    sum = _mm256_madd_epi16(sum, _mm256_set1_epi16(1));  // at most 8 x 2 x 15 x 127 per 16-bit lane
#endif
    return _mm256_sub_epi32(sum, _mm256_slli_epi32(bcast32(at + 4), 3));
  } else {
#if defined(__AVXVNNI__)
    const __m256i k80 = _mm256_set1_epi8(static_cast<char>(0x80));
    for (int i = 0; i < kWords; ++i)
      sum = _mm256_dpbusd_avx_epi32(sum, _mm256_xor_si256(ld(c + 64 * i), k80), bcast32(at + q8s::kLevels + 4 * i));
    return _mm256_sub_epi32(sum, _mm256_slli_epi32(bcast32(at + 4), 7));
#else
    for (int i = 0; i < kWords; ++i) {
      const __m256i v = ld(c + 64 * i);
      sum = dpbusd(sum, _mm256_sign_epi8(v, v), _mm256_sign_epi8(bcast32(at + q8s::kLevels + 4 * i), v));
    }
    return sum;
#endif
  }
}

template <bool Q4, int T>
void q0_x16(int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  constexpr size_t kCol = Q4 ? 288 : 544;
  const auto* wc = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc[2][T];
  for (auto& half : acc)
    for (auto& v : half) v = _mm256_setzero_ps();
  for (int64_t s = 0; s < n / 32; ++s, wc += kCol, ab += kQ8S) {
    prefetch_column(wc, kCol);
    for (int h = 0; h < 2; ++h) {
      const __m256 d = f16x8(wc + 16 * h);
      for (int t = 0; t < T; ++t) {
        const u8* at = ab + t * stride;
        float da;
        std::memcpy(&da, at, 4);
        const __m256i isum = q0_block_half<Q4>(wc + 32 + 32 * h, at);
        acc[h][t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(da)), _mm256_cvtepi32_ps(isum), acc[h][t]);
      }
    }
  }
  for (int t = 0; t < T; ++t) {
    _mm256_storeu_ps(out[t], acc[0][t]);
    _mm256_storeu_ps(out[t] + 8, acc[1][t]);
  }
}

constexpr KernelEntry kEntries[] = {
    {StorageType::Q4_K_X16,
     {.act_type = StorageType::Q8_K, .quantize_act = act_q8_k, .isa = kUnitIsa, .group1 = q4k_x16<1>, .group4 = q4k_x16<4>}},
    {StorageType::Q6_K_X16,
     {.act_type = StorageType::Q8_K, .quantize_act = act_q8_k, .isa = kUnitIsa, .group1 = q6k_x16<1>, .group4 = q6k_x16<4>}},
    {StorageType::Q4_0_X16,
     {.act_type = StorageType::Q8_0, .quantize_act = act_q8_0_sums, .isa = kUnitIsa, .group1 = q0_x16<true, 1>,
      .group4 = q0_x16<true, 4>, .act_bytes = act_q8_0_sums_bytes}},
    {StorageType::Q8_0_X16,
     {.act_type = StorageType::Q8_0, .quantize_act = act_q8_0_sums, .isa = kUnitIsa, .group1 = q0_x16<false, 1>,
      .group4 = q0_x16<false, 4>, .act_bytes = act_q8_0_sums_bytes}},
};

}  // namespace

constinit const KernelTable SY_AVX2_TABLE(kAvx2X16){kEntries};

}  // namespace sy::cpu
