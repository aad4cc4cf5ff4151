// AVX2 + FMA + F16C dot products. Built with those flags only, and again with AVX-VNNI
// (simd_avx2.hpp); called only when the CPU has them. Types without a specialised kernel
// here fall back to the scalar ones.
#include <cstring>

#include "dot_tables.hpp"
#include "kquant_scales.hpp"
#include "kquant_scales_simd.hpp"
#include "switchyard/quant.hpp"
#include "simd_avx2.hpp"

namespace sy::cpu {
namespace {

using namespace avx2;
using u8 = uint8_t;

float dot_f32(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
  float s = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

float dot_f16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    const __m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i + 8)));
    s0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(y + i + 8), s1);
  }
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) s += _cvtsh_ss(x[i]) * y[i];
  return s;
}

float dot_bf16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const uint16_t*>(a);
  auto widen = [](const uint16_t* p) {  // 8 bf16 -> 8 f32, exact
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
  };
  __m256 s0 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(widen(x + i), widen(y + i), s0);
  float s = hsum(s0);
  for (; i < n; ++i) s += bf16_to_fp32(x[i]) * bf16_to_fp32(y[i]);
  return s;
}

// Blocks against Q8_0 blocks, two blocks per step into two accumulators: with one, every
// block waits for the previous block's FMA (its latency is most of a block's work).
template <int WBytes, class Levels>
float dot_sym32(int64_t n, const void* w, const void* a, Levels levels) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  auto step = [&](const u8* b, const u8* y, __m256& acc) {
    const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + 2));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(b) * f16(y)), _mm256_cvtepi32_ps(dot_i8(levels(b), qy)), acc);
  };
  const int64_t nb = n / 32;
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2, wb += 2 * WBytes, ab += 68) {
    for (int l = 0; l < 2 * WBytes; l += 64) prefetch_ahead(wb + l);
    step(wb, ab, acc0);
    step(wb + WBytes, ab + 34, acc1);
  }
  if (i < nb) step(wb, ab, acc0);
  return hsum(_mm256_add_ps(acc0, acc1));
}

float dot_q8_0(int64_t n, const void* w, const void* a) {
  return dot_sym32<34>(n, w, a, [](const u8* b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2)); });
}

float dot_q4_0(int64_t n, const void* w, const void* a) {
  return dot_sym32<18>(n, w, a, [](const u8* b) { return _mm256_sub_epi8(nibbles(b + 2), _mm256_set1_epi8(8)); });
}

// One kernel for one and for four activation rows (R): each row's arithmetic is the same
// whatever R is, so prefill (4-row) results equal decode (1-row) ones bit for bit and a
// token's logits do not depend on the tokens batched with it.
template <int R>
void q4_k_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  __m256 acc[R], minus[R];
  for (int r = 0; r < R; ++r) acc[r] = minus[r] = _mm256_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  for (int64_t i = 0; i < n / 256; ++i, wb += 144, ab += 292) {
    for (int l = 0; l < 144; l += 64) prefetch_ahead(wb + l);
    const ScaleMinWords u = scale_min_words_k4(wb + 4);
    uint8_t sm[8];
    std::memcpy(sm, u.w, 8);
    const float d = f16(wb), dmin = f16(wb + 2);
    float da[R];
    for (int r = 0; r < R; ++r) {
      std::memcpy(&da[r], ab + r * stride, 4);
      minus[r] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * da[r]), k4_min_terms(u, ab + r * stride + 260), minus[r]);
    }
    __m256i sumi[R];
    for (int r = 0; r < R; ++r) sumi[r] = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i q4 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 16 + 32 * j));
      const __m256i lo = _mm256_and_si256(q4, m4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q4, 4), m4);
      const __m256i s0 = _mm256_set1_epi16(sm[2 * j]), s1 = _mm256_set1_epi16(sm[2 * j + 1]);
      for (int r = 0; r < R; ++r) {
        const u8* q8 = ab + r * stride + 4 + 64 * j;
        const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8));
        const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 32));
        sumi[r] = dpwssd(dpwssd(sumi[r], _mm256_maddubs_epi16(lo, y0), s0), _mm256_maddubs_epi16(hi, y1), s1);
      }
    }
    for (int r = 0; r < R; ++r) acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * da[r]), _mm256_cvtepi32_ps(sumi[r]), acc[r]);
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]) - hsum(minus[r]);
}

float dot_q4_k(int64_t n, const void* w, const void* a) {
  float out;
  q4_k_rows<1>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), 0, &out);
  return out;
}

void dot4_q4_k(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  q4_k_rows<4>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), stride, out);
}

// Block j of each row goes to accumulator j % 2, as in dot_sym32, so every row's result
// equals the single-row kernel's bit for bit.
void dot4_q8_0(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc[2][4];
  for (auto& row : acc)
    for (auto& v : row) v = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / 32; ++i, wb += 34, ab += 34) {
    if (i % 2 == 0) prefetch_ahead(wb);
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 2));
    const __m256i ax = _mm256_sign_epi8(qx, qx);
    const float dw = f16(wb);
    auto& ac = acc[i & 1];
    for (int r = 0; r < 4; ++r) {
      const u8* ar = ab + r * stride;
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + 2));
      const __m256i p = dpbusd(_mm256_setzero_si256(), ax, _mm256_sign_epi8(y, qx));
      ac[r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * f16(ar)), _mm256_cvtepi32_ps(p), ac[r]);
    }
  }
  for (int r = 0; r < 4; ++r) out[r] = hsum(_mm256_add_ps(acc[0][r], acc[1][r]));
}

// Q6_K levels u in 0..63 for one super-block, in element order (u[2h + k] covers elements
// 128h + 32k .. +31). The stored value is u - 32; callers subtract 32 * y via block sums.
inline void q6k_levels(const u8* wb, __m256i u[8]) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(0x03);
  for (int h = 0; h < 2; ++h) {
    const u8* ql = wb + 64 * h;
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 128 + 32 * h));
    const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
    const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
    u[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4));
    u[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4));
    u[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m2), 4));
    u[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m2), 4));
  }
}

// Q6_K for one and for four activation rows, one kernel (see q4_k_rows).
template <int R>
void q6_k_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / 256; ++i, wb += 210, ab += 292) {
    for (int l = 0; l < 210; l += 64) prefetch_ahead(wb + l);
    __m256i u[8];
    q6k_levels(wb, u);
    const auto* sc = reinterpret_cast<const int8_t*>(wb + 192);
    __m256i scv[8];  // scales of the two 16-element groups of each 32-element chunk
    for (int c = 0; c < 8; ++c) scv[c] = _mm256_set_m128i(_mm_set1_epi16(sc[2 * c + 1]), _mm_set1_epi16(sc[2 * c]));
    const __m256i sw32 = _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc))), 5);
    const float d = f16(wb + 208);
    for (int r = 0; r < R; ++r) {
      const u8* ar = ab + r * stride;
      __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(),
                                      _mm256_madd_epi16(sw32, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + 260))));
      for (int c = 0; c < 8; ++c) {
        const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ar + 4 + 32 * c));
        sumi = dpwssd(sumi, _mm256_maddubs_epi16(u[c], y), scv[c]);
      }
      float da;
      std::memcpy(&da, ar, 4);
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(sumi), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]);
}

void dot4_q6_k(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  q6_k_rows<4>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), stride, out);
}

float dot_q6_k(int64_t n, const void* w, const void* a) {
  float out;
  q6_k_rows<1>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), 0, &out);
  return out;
}


// Affine 32-element types against Q8_0: d_w*d_a*sum(q*qa) + m_w*d_a*sum(qa).
template <int WBytes, class Levels>
float dot_affine32(int64_t n, const void* w, const void* a, Levels levels) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc = _mm256_setzero_ps(), acc_m = _mm256_setzero_ps();
  const __m256i ones8 = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < n / 32; ++i, wb += WBytes, ab += 34) {
    if (i % 2 == 0) prefetch_ahead(wb);
    const __m256i q = levels(wb);  // unsigned levels
    const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2));
    const __m256i p = dpbusd(_mm256_setzero_si256(), q, y);
    const __m256i ys = dpbusd(_mm256_setzero_si256(), ones8, y);
    const float da = f16(ab);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb) * da), _mm256_cvtepi32_ps(p), acc);
    acc_m = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb + 2) * da), _mm256_cvtepi32_ps(ys), acc_m);
  }
  return hsum(_mm256_add_ps(acc, acc_m));
}


const __m256i& iq4_table() {
  static const __m256i t = _mm256_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
                                            -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
  return t;
}

float dot_q4_1(int64_t n, const void* w, const void* a) {
  return dot_affine32<20>(n, w, a, [](const u8* b) { return nibbles(b + 4); });
}

float dot_q5_1(int64_t n, const void* w, const void* a) {
  return dot_affine32<24>(n, w, a, [](const u8* b) {
    uint32_t qh;
    std::memcpy(&qh, b + 4, 4);
    return _mm256_or_si256(nibbles(b + 8), _mm256_and_si256(bytes_from_bits(qh), _mm256_set1_epi8(0x10)));
  });
}

float dot_q5_0(int64_t n, const void* w, const void* a) {
  return dot_sym32<22>(n, w, a, [](const u8* b) {
    uint32_t qh;
    std::memcpy(&qh, b + 2, 4);
    const __m256i u = _mm256_or_si256(nibbles(b + 6), _mm256_and_si256(bytes_from_bits(qh), _mm256_set1_epi8(0x10)));
    return _mm256_sub_epi8(u, _mm256_set1_epi8(16));
  });
}

float dot_iq4_nl(int64_t n, const void* w, const void* a) {
  return dot_sym32<18>(n, w, a, [](const u8* b) { return _mm256_shuffle_epi8(iq4_table(), nibbles(b + 2)); });
}

float dot_iq4_xs(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / 256; ++i, wb += 136, ab += 292) {
    for (int l = 0; l < 136; l += 64) prefetch_ahead(wb + l);
    float da;
    std::memcpy(&da, ab, 4);
    uint16_t sh;
    std::memcpy(&sh, wb + 2, 2);
    __m256i sumi = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((wb[4 + ib / 2] >> (4 * (ib % 2))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
      const __m256i v = _mm256_shuffle_epi8(iq4_table(), nibbles(wb + 8 + 16 * ib));
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 4 + 32 * ib));
      const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(v, v), _mm256_sign_epi8(y, v));
      sumi = dpwssd(sumi, p16, _mm256_set1_epi16(static_cast<int16_t>(ls - 32)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb) * da), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum(acc);
}

float dot_q5_k(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc = _mm256_setzero_ps(), minus = _mm256_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < n / 256; ++i, wb += 176, ab += 292) {
    for (int l = 0; l < 176; l += 64) prefetch_ahead(wb + l);
    float da;
    std::memcpy(&da, ab, 4);
    const auto* q8 = ab + 4;
    const ScaleMinWords u = scale_min_words_k4(wb + 4);
    uint8_t sm[8];
    std::memcpy(sm, u.w, 8);
    minus = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb + 2) * da), k4_min_terms(u, ab + 260), minus);
    __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 16));
    __m256i sumi = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i q4 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 48 + 32 * j));
      // Bit 2j of each qh byte is the fifth bit of the low nibble, bit 2j+1 of the high one.
      const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(qh, one), 4);
      const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 1), one), 4);
      qh = _mm256_srli_epi16(qh, 2);
      const __m256i lo = _mm256_or_si256(_mm256_and_si256(q4, m4), h0);
      const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q4, 4), m4), h1);
      const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * j));
      const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * j + 32));
      sumi = dpwssd(dpwssd(sumi, _mm256_maddubs_epi16(lo, y0), _mm256_set1_epi16(sm[2 * j])), _mm256_maddubs_epi16(hi, y1),
                    _mm256_set1_epi16(sm[2 * j + 1]));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb) * da), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum(acc) - hsum(minus);
}


// Two 16-element groups' scales as 16 x int16: lanes 0..7 group a, lanes 8..15 group b.
inline __m256i pair_scales(int a, int b) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(b)), _mm_set1_epi16(static_cast<int16_t>(a)));
}

float dot_q2_k(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc = _mm256_setzero_ps();
  float minus = 0;
  const __m256i m3 = _mm256_set1_epi8(3);
  for (int64_t i = 0; i < n / 256; ++i, wb += 84, ab += 292) {
    for (int l = 0; l < 84; l += 64) prefetch_ahead(wb + l);
    float da;
    std::memcpy(&da, ab, 4);
    const auto* q8 = ab + 4;
    // Mins: one per 16 elements, against the activation's 16-element sums.
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), _mm_set1_epi8(0x0f)));
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 260));
    minus += f16(wb + 82) * da * static_cast<float>(hsum_i32(_mm256_madd_epi16(mins, bs)));
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 16 + 32 * h));
      for (int s2 = 0; s2 < 4; ++s2, q = _mm256_srli_epi16(q, 2)) {
        const __m256i v = _mm256_and_si256(q, m3);
        const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 128 * h + 32 * s2));
        const int g = 8 * h + 2 * s2;
        sumi = dpwssd(sumi, _mm256_maddubs_epi16(v, y), pair_scales(wb[g] & 0xf, wb[g + 1] & 0xf));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb + 80) * da), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum(acc) - minus;
}

float dot_q3_k(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc = _mm256_setzero_ps();
  const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1), k4 = _mm256_set1_epi8(4);
  for (int64_t i = 0; i < n / 256; ++i, wb += 110, ab += 292) {
    for (int l = 0; l < 110; l += 64) prefetch_ahead(wb + l);
    float da;
    std::memcpy(&da, ab, 4);
    const auto* q8 = ab + 4;
    // One vector store read back a byte at a time forwards cheaply (the scalar unpacking's
    // many small stores did not).
    alignas(16) int8_t sc[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(sc), q3k_scales_i8(wb + 96));
    __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb));
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 32 + 32 * h));
      for (int s2 = 0; s2 < 4; ++s2, q = _mm256_srli_epi16(q, 2), hm = _mm256_srli_epi16(hm, 1)) {
        // u = low two bits | high bit << 2 in 0..7; the level is u - 4.
        const __m256i u = _mm256_or_si256(_mm256_and_si256(q, m3), _mm256_slli_epi16(_mm256_and_si256(hm, one), 2));
        const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 128 * h + 32 * s2));
        const __m256i d16 = _mm256_sub_epi16(_mm256_maddubs_epi16(u, y), _mm256_maddubs_epi16(k4, y));
        const int g = 8 * h + 2 * s2;
        sumi = dpwssd(sumi, d16, pair_scales(sc[g], sc[g + 1]));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb + 108) * da), _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum(acc);
}

constexpr DotKernel q8_0(DotFn f, Dot4Fn f4 = nullptr) { return {StorageType::Q8_0, f, act_q8_0, kUnitIsa, f4}; }
constexpr DotKernel q8_k(DotFn f, Dot4Fn f4 = nullptr) { return {StorageType::Q8_K, f, act_q8_k, kUnitIsa, f4}; }

// Q4_0, Q5_K and IQ4_XS take their 4-row kernels from dot_avx2_dot4.cpp's table.
constexpr KernelEntry kEntries[] = {
    {StorageType::F32, {StorageType::F32, dot_f32, act_f32, kUnitIsa}},
    {StorageType::F16, {StorageType::F32, dot_f16, act_f32, kUnitIsa}},
    {StorageType::BF16, {StorageType::BF16, dot_bf16, act_bf16, kUnitIsa}},
    {StorageType::Q8_0, q8_0(dot_q8_0, dot4_q8_0)},
    {StorageType::Q4_0, q8_0(dot_q4_0)},
    {StorageType::Q4_K, q8_k(dot_q4_k, dot4_q4_k)},
    {StorageType::Q6_K, q8_k(dot_q6_k, dot4_q6_k)},
    {StorageType::Q5_K, q8_k(dot_q5_k)},
    {StorageType::Q4_1, q8_0(dot_q4_1)},
    {StorageType::Q5_0, q8_0(dot_q5_0)},
    {StorageType::Q5_1, q8_0(dot_q5_1)},
    {StorageType::IQ4_NL, q8_0(dot_iq4_nl)},
    {StorageType::IQ4_XS, q8_k(dot_iq4_xs)},
    {StorageType::Q2_K, q8_k(dot_q2_k)},
    {StorageType::Q3_K, q8_k(dot_q3_k)},
};

}  // namespace

constinit const KernelTable SY_AVX2_TABLE(kAvx2Kernels){kEntries};

}  // namespace sy::cpu
