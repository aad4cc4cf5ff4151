// AVX-512 (F, BW, VL) dot products, two 32-element blocks or one 64-element K-quant chunk
// per 512-bit step. Types without a kernel here use the AVX2 one.
#include <immintrin.h>

#include <cstring>

#include "dot_tables.hpp"
#include "kquant_scales.hpp"
#include "simd_avx512.hpp"

namespace sy::cpu {
namespace {

using namespace avx512;

float dot_f32(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    prefetch_ahead(x + i);
    prefetch_ahead(x + i + 16);
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16), s1);
  }
  for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), s0);
  float s = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

float dot_f16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  // Four accumulators: with one, each 16 elements wait for the previous FMA, which capped
  // the F16 GEMV well below the memory's bandwidth.
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  const auto half = [&](int64_t at) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + at))); };
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    prefetch_ahead(x + i);
    prefetch_ahead(x + i + 32);
    s0 = _mm512_fmadd_ps(half(i), _mm512_loadu_ps(y + i), s0);
    s1 = _mm512_fmadd_ps(half(i + 16), _mm512_loadu_ps(y + i + 16), s1);
    s2 = _mm512_fmadd_ps(half(i + 32), _mm512_loadu_ps(y + i + 32), s2);
    s3 = _mm512_fmadd_ps(half(i + 48), _mm512_loadu_ps(y + i + 48), s3);
  }
  for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(half(i), _mm512_loadu_ps(y + i), s0);
  float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  for (; i < n; ++i) s += _cvtsh_ss(x[i]) * y[i];
  return s;
}

// s plus an odd last block's product: shared by the 1- and 4-row kernels so both round
// (and contract) it the same way, bit for bit.
inline float q8_0_odd_block(float s, const u8* wb, const u8* ab) {
  const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 2));
  const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2));
  const __m512i p = dot_i8(join(qx, _mm256_setzero_si256()), join(qy, _mm256_setzero_si256()));
  return s + f16(wb) * f16(ab) * static_cast<float>(_mm512_reduce_add_epi32(p));
}

float dot_q8_0(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 2 <= n / 32; i += 2, wb += 68, ab += 68) {
    const __m512i qx = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 2)),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 36)));
    const __m512i qy = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 36)));
    acc = _mm512_fmadd_ps(join(f16(wb) * f16(ab), f16(wb + 34) * f16(ab + 34)), _mm512_cvtepi32_ps(dot_i8(qx, qy)), acc);
  }
  float s = _mm512_reduce_add_ps(acc);
  if (i < n / 32) s = q8_0_odd_block(s, wb, ab);
  return s;
}


float dot_q4_0(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  const __m512i off = _mm512_set1_epi8(8);
  int64_t i = 0;
  for (; i + 2 <= n / 32; i += 2, wb += 36, ab += 68) {
    const __m512i qx = _mm512_sub_epi8(join(nibbles(wb + 2), nibbles(wb + 20)), off);
    const __m512i qy = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 36)));
    acc = _mm512_fmadd_ps(join(f16(wb) * f16(ab), f16(wb + 18) * f16(ab + 34)), _mm512_cvtepi32_ps(dot_i8(qx, qy)), acc);
  }
  float s = _mm512_reduce_add_ps(acc);
  if (i < n / 32) {
    const __m256i qx = _mm256_sub_epi8(nibbles(wb + 2), _mm256_set1_epi8(8));
    const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2));
    const __m512i p = dot_i8(join(qx, _mm256_setzero_si256()), join(qy, _mm256_setzero_si256()));
    s += f16(wb) * f16(ab) * static_cast<float>(_mm512_reduce_add_epi32(p));
  }
  return s;
}


// Q4_K building blocks. A 64-element chunk j is 32 bytes of nibbles: broadcast to both
// halves of a register, shift the upper half right by 4, mask: lower half = sub-block 2j,
// upper = 2j+1, in the same byte order as the activations.
struct Q4K {
  __m512i shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  __m512i m4 = _mm512_set1_epi8(0x0f);
  __m512i idx[4];  // word permutations picking scale 2j for lanes 0..15 and 2j+1 for 16..31
  Q4K() {
    for (int j = 0; j < 4; ++j)
      idx[j] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<int16_t>(2 * j))),
                                  _mm256_set1_epi16(static_cast<int16_t>(2 * j + 1)), 1);
  }
  __m512i levels(const u8* qs, int j) const {
    const __m512i b = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * j)));
    return _mm512_and_si512(_mm512_srlv_epi16(b, shifts), m4);
  }
  // Scales in bytes 0..7 and mins in bytes 8..15 of one register.
  static __m128i scale_mins(const uint8_t* packed) {
    const ScaleMinWords u = scale_min_words_k4(packed);
    return _mm_set_epi32(static_cast<int>(u.w[3]), static_cast<int>(u.w[2]), static_cast<int>(u.w[1]),
                         static_cast<int>(u.w[0]));
  }
  // The 8 scales as int16 in lanes 0..7 (the rest unused).
  static __m512i scale_words(__m128i sm) { return _mm512_castsi128_si512(_mm_cvtepu8_epi16(sm)); }
  // min_j * (bsum[2j] + bsum[2j+1]) for all j, as 8 int32 partial sums.
  static __m256i min_terms(__m128i sm, const uint8_t* bsums) {
    const __m128i m8 = _mm_srli_si128(sm, 8);
    return _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8)),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums)));
  }
};

float dot_q4_k(int64_t n, const void* w, const void* a) {
  static const Q4K K;
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  __m256 acc_min = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / 256; ++i, wb += 144, ab += 292) {
    float da;
    std::memcpy(&da, ab, 4);
    const __m128i sm = Q4K::scale_mins(wb + 4);
    acc_min = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb + 2) * da), _mm256_cvtepi32_ps(Q4K::min_terms(sm, ab + 260)), acc_min);
    const __m512i sw = Q4K::scale_words(sm);
    __m512i sumi = _mm512_setzero_si512();
    for (int j = 0; j < 4; ++j) {
      const __m512i y = _mm512_loadu_si512(ab + 4 + 64 * j);
      const __m512i p = _mm512_madd_epi16(_mm512_maddubs_epi16(K.levels(wb + 16, j), y), _mm512_permutexvar_epi16(K.idx[j], sw));
      sumi = _mm512_add_epi32(sumi, p);
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(f16(wb) * da), _mm512_cvtepi32_ps(sumi), acc);
  }
  const __m256 mn = acc_min;
  __m128 r = _mm_add_ps(_mm256_castps256_ps128(mn), _mm256_extractf128_ps(mn, 1));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm512_reduce_add_ps(acc) - _mm_cvtss_f32(r);
}

// Q6_K building blocks: levels u in 0..63 (the stored value is u - 32). Sums use u, and
// 32 * (activation 16-element sums) * scale is subtracted once per super-block.
struct Q6K {
  __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(0x03);
  __m512i idx[4];  // word permutations: groups g..g+3 of 8 lanes each, g = 4 * (2h + k)
  Q6K() {
    for (int c = 0; c < 4; ++c) {
      const int g = 4 * c;
      idx[c] = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(g + 1)), _mm_set1_epi16(static_cast<int16_t>(g)))),
          _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(g + 3)), _mm_set1_epi16(static_cast<int16_t>(g + 2))), 1);
    }
  }
  // The four 64-level chunks of one super-block, in element order.
  void levels(const u8* wb, __m512i out[4]) const {
    for (int h = 0; h < 2; ++h) {
      const u8* ql = wb + 64 * h;
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 128 + 32 * h));
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i u0 = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4));
      const __m256i u1 = _mm256_or_si256(_mm256_and_si256(l1, m4),
                                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4));
      const __m256i u2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m2), 4));
      const __m256i u3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m2), 4));
      out[2 * h] = join(u0, u1);
      out[2 * h + 1] = join(u2, u3);
    }
  }
  static __m256i scale_words(const u8* wb) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb + 192)));
  }
  // sum_g scale_g * 32 * bsum_g, as 8 int32 partial sums.
  static __m256i offset_terms(__m256i sw, const u8* bsums) {
    return _mm256_madd_epi16(_mm256_slli_epi16(sw, 5), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums)));
  }
};

float dot_q6_k(int64_t n, const void* w, const void* a) {
  static const Q6K K;
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n / 256; ++i, wb += 210, ab += 292) {
    float da;
    std::memcpy(&da, ab, 4);
    __m512i u[4];
    K.levels(wb, u);
    const __m256i sw = Q6K::scale_words(wb);
    const __m512i sw512 = _mm512_castsi256_si512(sw);
    __m512i sumi = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), Q6K::offset_terms(sw, ab + 260)));
    for (int c = 0; c < 4; ++c) {
      const __m512i y = _mm512_loadu_si512(ab + 4 + 64 * c);
      sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(_mm512_maddubs_epi16(u[c], y), _mm512_permutexvar_epi16(K.idx[c], sw512)));
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(f16(wb + 208) * da), _mm512_cvtepi32_ps(sumi), acc);
  }
  return _mm512_reduce_add_ps(acc);
}


void dot4_q8_0(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  const int64_t nb = n / 32;
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    const u8* w0 = wb + 34 * i;
    const __m512i qx = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w0 + 2)),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w0 + 36)));
    const __mmask64 neg = _mm512_movepi8_mask(qx);
    const __m512i ax = _mm512_abs_epi8(qx);
    const float d0 = f16(w0), d1 = f16(w0 + 34);
    for (int r = 0; r < 4; ++r) {
      const u8* a0 = ab + r * stride + 34 * i;
      const __m512i y = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a0 + 2)),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a0 + 36)));
      const __m512i sy = _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y);
      const __m512i p = _mm512_madd_epi16(_mm512_maddubs_epi16(ax, sy), _mm512_set1_epi16(1));
      acc[r] = _mm512_fmadd_ps(join(d0 * f16(a0), d1 * f16(a0 + 34)), _mm512_cvtepi32_ps(p), acc[r]);
    }
  }
  for (int r = 0; r < 4; ++r) {
    out[r] = _mm512_reduce_add_ps(acc[r]);
    if (i < nb) out[r] = q8_0_odd_block(out[r], wb + 34 * i, ab + r * stride + 34 * i);
  }
}

void dot4_q4_k(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  static const Q4K K;
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  __m256 acc_min[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t i = 0; i < n / 256; ++i, wb += 144, ab += 292) {
    const __m128i sm = Q4K::scale_mins(wb + 4);
    const float d = f16(wb), dmin = f16(wb + 2);
    float da[4];
    for (int r = 0; r < 4; ++r) {
      std::memcpy(&da[r], ab + r * stride, 4);
      acc_min[r] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * da[r]),
                                   _mm256_cvtepi32_ps(Q4K::min_terms(sm, ab + r * stride + 260)), acc_min[r]);
    }
    const __m512i sw = Q4K::scale_words(sm);
    __m512i sumi[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int j = 0; j < 4; ++j) {
      const __m512i q = K.levels(wb + 16, j);
      const __m512i sc = _mm512_permutexvar_epi16(K.idx[j], sw);
      for (int r = 0; r < 4; ++r) {
        const __m512i y = _mm512_loadu_si512(ab + r * stride + 4 + 64 * j);
        sumi[r] = _mm512_add_epi32(sumi[r], _mm512_madd_epi16(_mm512_maddubs_epi16(q, y), sc));
      }
    }
    for (int r = 0; r < 4; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * da[r]), _mm512_cvtepi32_ps(sumi[r]), acc[r]);
  }
  for (int r = 0; r < 4; ++r) {
    __m128 m = _mm_add_ps(_mm256_castps256_ps128(acc_min[r]), _mm256_extractf128_ps(acc_min[r], 1));
    m = _mm_add_ps(m, _mm_movehl_ps(m, m));
    m = _mm_add_ss(m, _mm_movehdup_ps(m));
    out[r] = _mm512_reduce_add_ps(acc[r]) - _mm_cvtss_f32(m);
  }
}

void dot4_q6_k(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  static const Q6K K;
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int64_t i = 0; i < n / 256; ++i, wb += 210, ab += 292) {
    __m512i u[4];
    K.levels(wb, u);
    const __m256i sw = Q6K::scale_words(wb);
    const __m512i sw512 = _mm512_castsi256_si512(sw);
    __m512i sc[4];
    for (int c = 0; c < 4; ++c) sc[c] = _mm512_permutexvar_epi16(K.idx[c], sw512);
    const float d = f16(wb + 208);
    for (int r = 0; r < 4; ++r) {
      const u8* ar = ab + r * stride;
      __m512i sumi = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), Q6K::offset_terms(sw, ar + 260)));
      for (int c = 0; c < 4; ++c) {
        const __m512i y = _mm512_loadu_si512(ar + 4 + 64 * c);
        sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(_mm512_maddubs_epi16(u[c], y), sc[c]));
      }
      float da;
      std::memcpy(&da, ar, 4);
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * da), _mm512_cvtepi32_ps(sumi), acc[r]);
    }
  }
  for (int r = 0; r < 4; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
}

// The other types: dot_avx512_extra.cpp, then dot_grouped_avx512.cpp, then AVX2.
constexpr KernelEntry kEntries[] = {
    {StorageType::F32, {StorageType::F32, dot_f32, act_f32, Isa::avx512}},
    {StorageType::F16, {StorageType::F32, dot_f16, act_f32, Isa::avx512}},
    {StorageType::Q8_0, {StorageType::Q8_0, dot_q8_0, act_q8_0, Isa::avx512, dot4_q8_0}},
    {StorageType::Q4_0, {StorageType::Q8_0, dot_q4_0, act_q8_0, Isa::avx512}},
    {StorageType::Q4_K, {StorageType::Q8_K, dot_q4_k, act_q8_k, Isa::avx512, dot4_q4_k}},
    {StorageType::Q6_K, {StorageType::Q8_K, dot_q6_k, act_q8_k, Isa::avx512, dot4_q6_k}},
};

}  // namespace

constinit const KernelTable kAvx512Kernels{kEntries};

}  // namespace sy::cpu
