// AVX-512 VNNI kernels for Q4_K, Q5_K, Q6_K and IQ4_XS against Q8_K activations. Each kernel is
// written once for R activation rows: R = 1 is the GEMV dot, R = 4 the prefill
// micro-kernel, which unpacks a super-block's levels and scales once for all four rows.
//
// Q4_K/Q5_K: levels are at most 31, so vpmaddubsw cannot saturate; vpdpwssd then applies
// the sub-block scales and accumulates in one instruction. Scales are picked out of a
// broadcast register with an in-lane byte shuffle (no cross-lane permute per chunk), and
// the min terms stay in a vector accumulator (no horizontal sum per super-block).
// IQ4_XS: levels are signed, so the table is stored + 128 (unsigned, up to 241, which would
// saturate vpmaddubsw but not vpdpbusd) and 128 * sum(y) comes back from the block sums.
#include <cstring>

#include "dot_avx512_vnni_common.hpp"
#include "kquant_scales.hpp"

namespace sy::cpu {
namespace {

using namespace avx512;
using namespace avx512_vnni;

struct KConsts {
  Consts c;
  __m512i half_shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  __m512i sc_pick[4];  // words take scale byte 2j (lower 256 bits) or 2j + 1 (upper)
  __m512i hb_bit[4];   // Q5_K: bit 2j (lower 256 bits) or 2j + 1 (upper) of each qh byte
  __m512i pair_idx[4];  // IQ4_XS: int32 lanes 0..7 take scale 2p, 8..15 scale 2p + 1
  KConsts() {
    for (int j = 0; j < 4; ++j) {
      sc_pick[j] = join(_mm256_set1_epi16(static_cast<int16_t>(0x8000 | (2 * j))),
                        _mm256_set1_epi16(static_cast<int16_t>(0x8000 | (2 * j + 1))));
      hb_bit[j] = join(_mm256_set1_epi8(static_cast<char>(1 << (2 * j))), _mm256_set1_epi8(static_cast<char>(1 << (2 * j + 1))));
      pair_idx[j] = join(_mm256_set1_epi32(2 * j), _mm256_set1_epi32(2 * j + 1));
    }
  }
};

inline float f32(const u8* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

inline float hsum256(__m256 v) {
  __m128 r = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

template <bool Q5, int R>
void q45k(int64_t n, const void* w, const void* a, size_t stride, float* out) {
  const KConsts k;
  constexpr int wbytes = Q5 ? 176 : 144, ql_off = Q5 ? 48 : 16;
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[R];
  __m256 acc_min[R];
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm512_setzero_ps();
    acc_min[r] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < n / 256; ++i, wb += wbytes, ab += 292) {
    for (int l = 0; l < wbytes; l += 64) prefetch_ahead(wb + l);
    const ScaleMinWords u = scale_min_words_k4(wb + 4);
    const __m512i sb = _mm512_set1_epi64(static_cast<long long>(u.w[0] | (uint64_t{u.w[1]} << 32)));
    const __m128i m8 = _mm_set_epi32(0, 0, static_cast<int>(u.w[3]), static_cast<int>(u.w[2]));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));  // each min twice: one per bsum
    __m512i q[4], sc[4];
    for (int j = 0; j < 4; ++j) {
      const __m512i b = _mm512_broadcast_i64x4(load256(wb + ql_off + 32 * j));
      q[j] = _mm512_and_si512(_mm512_srlv_epi16(b, k.half_shift), k.c.m4);
      if constexpr (Q5) {
        const __m512i qh = _mm512_broadcast_i64x4(load256(wb + 16));
        q[j] = _mm512_mask_add_epi8(q[j], _mm512_test_epi8_mask(qh, k.hb_bit[j]), q[j], k.c.k10);
      }
      sc[j] = _mm512_shuffle_epi8(sb, k.sc_pick[j]);
    }
    const float d = f16(wb), dmin = f16(wb + 2);
    for (int r = 0; r < R; ++r) {
      const u8* ar = ab + r * stride;
      __m512i sumi = _mm512_setzero_si512();
      for (int j = 0; j < 4; ++j)
        sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(q[j], _mm512_loadu_si512(ar + 4 + 64 * j)), sc[j]);
      const float da = f32(ar);
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * da), _mm512_cvtepi32_ps(sumi), acc[r]);
      const __m256i mt = _mm256_madd_epi16(mins, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + 260)));
      acc_min[r] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * da), _mm256_cvtepi32_ps(mt), acc_min[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(acc[r]) - hsum256(acc_min[r]);
}

template <int R>
void iq4xs(int64_t n, const void* w, const void* a, size_t stride, float* out) {
  const KConsts k;
  const __m256i nib4 = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28), two = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  const __m256i dup16 = _mm256_setr_epi16(0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14);
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t i = 0; i < n / 256; ++i, wb += 136, ab += 292) {
    for (int l = 0; l < 136; l += 64) prefetch_ahead(wb + l);
    uint32_t sl;
    std::memcpy(&sl, wb + 4, 4);
    // Scale ib: nibble ib of the low word, bit pair ib of the high word, biased by 32.
    const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(sl)), nib4), _mm256_set1_epi32(0xf));
    const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(ld16(wb + 2))), two), _mm256_set1_epi32(3));
    const __m256i s32 = _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));
    const __m256i s16 = _mm256_permutexvar_epi16(dup16, s32);  // each scale twice: one per bsum
    __m512i u[4], sc[4];
    for (int p = 0; p < 4; ++p) {
      u[p] = _mm512_shuffle_epi8(k.c.iq4_u, nibbles2(wb + 8 + 32 * p, wb + 24 + 32 * p, k.c));
      sc[p] = _mm512_permutexvar_epi32(k.pair_idx[p], _mm512_castsi256_si512(s32));
    }
    const float d = f16(wb);
    for (int r = 0; r < R; ++r) {
      const u8* ar = ab + r * stride;
      __m512i sumi = _mm512_setzero_si512();
      for (int p = 0; p < 4; ++p) {
        const __m512i dp = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[p], _mm512_loadu_si512(ar + 4 + 64 * p));
        sumi = _mm512_add_epi32(sumi, _mm512_mullo_epi32(dp, sc[p]));
      }
      const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(s16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + 260))), 7);
      sumi = _mm512_sub_epi32(sumi, _mm512_zextsi256_si512(corr));
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * f32(ar)), _mm512_cvtepi32_ps(sumi), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
}

// Q6_K: levels u = stored + 32 in 0..63 (vpmaddubsw cannot saturate); 32 * sum(y) * scale
// comes back from the block sums once per super-block. The 64-level chunks are built in
// 512-bit registers straight from memory: low bits of 64 bytes, the two high bits of each
// from a 32-byte word broadcast to both halves and shifted per half.
template <int R>
void q6k(int64_t n, const void* w, const void* a, size_t stride, float* out) {
  const KConsts k;
  const __m512i k30 = _mm512_set1_epi8(0x30);
  const __m512i shl_42 = join(_mm256_set1_epi16(4), _mm256_set1_epi16(2)), shr_02 = join(_mm256_setzero_si256(), _mm256_set1_epi16(2));
  __m512i gidx[4];  // word lanes of 8 take groups 4c, 4c + 1, 4c + 2, 4c + 3
  for (int c = 0; c < 4; ++c)
    gidx[c] = join(_mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(4 * c + 1)), _mm_set1_epi16(static_cast<int16_t>(4 * c))),
                   _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(4 * c + 3)), _mm_set1_epi16(static_cast<int16_t>(4 * c + 2))));
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t i = 0; i < n / 256; ++i, wb += 210, ab += 292) {
    for (int l = 0; l < 4; ++l) prefetch_ahead(wb + 64 * l);
    __m512i u[4], sc[4];
    for (int h = 0; h < 2; ++h) {
      const __m512i lb = _mm512_loadu_si512(wb + 64 * h);
      const __m512i qh = _mm512_broadcast_i64x4(load256(wb + 128 + 32 * h));
      u[2 * h] = _mm512_or_si512(_mm512_and_si512(lb, k.c.m4), _mm512_and_si512(_mm512_sllv_epi16(qh, shl_42), k30));
      u[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(lb, 4), k.c.m4),
                                     _mm512_and_si512(_mm512_srlv_epi16(qh, shr_02), k30));
    }
    const __m256i s16 = _mm256_cvtepi8_epi16(load128(wb + 192));
    for (int c = 0; c < 4; ++c) sc[c] = _mm512_permutexvar_epi16(gidx[c], _mm512_castsi256_si512(s16));
    const __m256i s32x = _mm256_slli_epi16(s16, 5);
    const float d = f16(wb + 208);
    for (int r = 0; r < R; ++r) {
      const u8* ar = ab + r * stride;
      const __m256i offs = _mm256_madd_epi16(s32x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + 260)));
      __m512i sumi = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), offs));
      for (int c = 0; c < 4; ++c)
        sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(u[c], _mm512_loadu_si512(ar + 4 + 64 * c)), sc[c]);
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * f32(ar)), _mm512_cvtepi32_ps(sumi), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
}

template <class F>
float one(F f, int64_t n, const void* w, const void* a) {
  float out;
  f(n, w, a, 0, &out);
  return out;
}

float dot_q4_k(int64_t n, const void* w, const void* a) { return one(q45k<false, 1>, n, w, a); }
float dot_q5_k(int64_t n, const void* w, const void* a) { return one(q45k<true, 1>, n, w, a); }
float dot_iq4_xs(int64_t n, const void* w, const void* a) { return one(iq4xs<1>, n, w, a); }
float dot_q6_k(int64_t n, const void* w, const void* a) { return one(q6k<1>, n, w, a); }

constexpr DotKernel q8_k(DotFn f, Dot4Fn f4) { return {StorageType::Q8_K, f, act_q8_k, Isa::avx512, f4}; }

constexpr KernelEntry kEntries[] = {
    {StorageType::Q4_K, q8_k(dot_q4_k, q45k<false, 4>)},
    {StorageType::Q5_K, q8_k(dot_q5_k, q45k<true, 4>)},
    {StorageType::IQ4_XS, q8_k(dot_iq4_xs, iq4xs<4>)},
    {StorageType::Q6_K, q8_k(dot_q6_k, q6k<4>)},
};

}  // namespace

constinit const KernelTable kAvx512VnniK{kEntries};

}  // namespace sy::cpu
