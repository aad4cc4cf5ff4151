// AVX-512 kernels for the remaining weight types: two 32-element blocks (or two K-quant
// 32/16-element groups) per 512-bit step. Built with the AVX-512 flags only.
#include "kquant_scales.hpp"
#include "kquant_scales_simd.hpp"
#include "switchyard/quant.hpp"
#include "simd_avx512.hpp"

namespace sy::cpu {
namespace {

using namespace avx512;

const __m512i& iq4_table() {
  static const __m512i t = _mm512_broadcast_i32x4(
      _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
  return t;
}

__m256i q5_bits(const u8* qh4) {  // 32 high bits -> 0x10 where set, in element order
  uint32_t qh;
  std::memcpy(&qh, qh4, 4);
  return _mm256_maskz_mov_epi8(static_cast<__mmask32>(qh), _mm256_set1_epi8(0x10));
}

// Symmetric 32-element blocks against Q8_0 (levels signed).
template <int WBytes, class Levels>
float sym32(int64_t n, const void* w, const void* a, Levels levels) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  const int64_t nb = n / 32;
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2, wb += 2 * WBytes, ab += 68) {
    const __m512i q = join(levels(wb), levels(wb + WBytes));
    const __m512i y = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 36)));
    acc = _mm512_fmadd_ps(join(f16(wb) * f16(ab), f16(wb + WBytes) * f16(ab + 34)), _mm512_cvtepi32_ps(dot_i8(q, y)), acc);
  }
  float s = _mm512_reduce_add_ps(acc);
  if (i < nb) {
    const __m512i p = dot_i8(join(levels(wb), _mm256_setzero_si256()),
                             join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)), _mm256_setzero_si256()));
    s += f16(wb) * f16(ab) * static_cast<float>(_mm512_reduce_add_epi32(p));
  }
  return s;
}

// Affine 32-element blocks against Q8_0: d_w d_a sum(q qa) + m_w d_a sum(qa).
template <int WBytes, class Levels>
float affine32(int64_t n, const void* w, const void* a, Levels levels) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  const __m512i ones8 = _mm512_set1_epi8(1), ones16 = _mm512_set1_epi16(1);
  const int64_t nb = n / 32;
  int64_t i = 0;
  auto step = [&](__m512i q, __m512i y, __m512 d, __m512 m) {
    const __m512i p = _mm512_madd_epi16(_mm512_maddubs_epi16(q, y), ones16);
    const __m512i ys = _mm512_madd_epi16(_mm512_maddubs_epi16(ones8, y), ones16);
    acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), acc);
    acc = _mm512_fmadd_ps(m, _mm512_cvtepi32_ps(ys), acc);
  };
  for (; i + 2 <= nb; i += 2, wb += 2 * WBytes, ab += 68) {
    const float da0 = f16(ab), da1 = f16(ab + 34);
    step(join(levels(wb), levels(wb + WBytes)),
         join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)),
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 36))),
         join(f16(wb) * da0, f16(wb + WBytes) * da1), join(f16(wb + 2) * da0, f16(wb + WBytes + 2) * da1));
  }
  if (i < nb) {
    const float da = f16(ab);
    step(join(levels(wb), _mm256_setzero_si256()),
         join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)), _mm256_setzero_si256()),
         join(f16(wb) * da, 0.f), join(f16(wb + 2) * da, 0.f));
  }
  return _mm512_reduce_add_ps(acc);
}

float dot_q4_1(int64_t n, const void* w, const void* a) {
  return affine32<20>(n, w, a, [](const u8* b) { return nibbles(b + 4); });
}
float dot_q5_1(int64_t n, const void* w, const void* a) {
  return affine32<24>(n, w, a, [](const u8* b) { return _mm256_or_si256(nibbles(b + 8), q5_bits(b + 4)); });
}
float dot_q5_0(int64_t n, const void* w, const void* a) {
  return sym32<22>(n, w, a, [](const u8* b) {
    return _mm256_sub_epi8(_mm256_or_si256(nibbles(b + 6), q5_bits(b + 2)), _mm256_set1_epi8(16));
  });
}
float dot_iq4_nl(int64_t n, const void* w, const void* a) {
  return sym32<18>(n, w, a, [](const u8* b) {
    return _mm512_castsi512_si256(_mm512_shuffle_epi8(iq4_table(), _mm512_castsi256_si512(nibbles(b + 2))));
  });
}

float dot_bf16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const uint16_t*>(a);
  auto widen = [](const uint16_t* p) {  // 16 bf16 -> 16 f32, exact
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
  };
  __m512 s0 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(widen(x + i), widen(y + i), s0);
  float s = _mm512_reduce_add_ps(s0);
  for (; i < n; ++i) s += bf16_to_fp32(x[i]) * bf16_to_fp32(y[i]);
  return s;
}

// Word permutations for four 16-element groups per 64 elements: lanes of 8 int16 take
// groups 4c, 4c+1, 4c+2, 4c+3 of a 16-entry scale vector.
struct GroupIdx {
  __m512i idx[4];
  GroupIdx() {
    for (int c = 0; c < 4; ++c) {
      const int g = 4 * c;
      idx[c] = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(g + 1)), _mm_set1_epi16(static_cast<int16_t>(g)))),
          _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(g + 3)), _mm_set1_epi16(static_cast<int16_t>(g + 2))), 1);
    }
  }
};

float dot_q2_k(int64_t n, const void* w, const void* a) {
  static const GroupIdx G;
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  __m256 acc_min = _mm256_setzero_ps();  // a vector accumulator: no horizontal sum per super-block
  const __m256i m3 = _mm256_set1_epi8(3);
  for (int64_t i = 0; i < n / 256; ++i, wb += 84, ab += 292) {
    prefetch_ahead(wb);
    prefetch_ahead(wb + 64);
    float da;
    std::memcpy(&da, ab, 4);
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb));
    const __m256i scales = _mm256_cvtepu8_epi16(_mm_and_si128(sc8, _mm_set1_epi8(0x0f)));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc8, 4), _mm_set1_epi8(0x0f)));
    const __m256i mt = _mm256_madd_epi16(mins, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 260)));
    acc_min = _mm256_fmadd_ps(_mm256_set1_ps(f16(wb + 82) * da), _mm256_cvtepi32_ps(mt), acc_min);
    const __m512i sw = _mm512_castsi256_si512(scales);
    __m512i sumi = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 16 + 32 * h));
      for (int s2 = 0; s2 < 4; s2 += 2) {
        const __m512i v = join(_mm256_and_si256(_mm256_srli_epi16(q, 2 * s2), m3),
                               _mm256_and_si256(_mm256_srli_epi16(q, 2 * s2 + 2), m3));
        const __m512i y = _mm512_loadu_si512(ab + 4 + 128 * h + 32 * s2);
        const __m512i sc = _mm512_permutexvar_epi16(G.idx[2 * h + s2 / 2], sw);
        sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(_mm512_maddubs_epi16(v, y), sc));
      }
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(f16(wb + 80) * da), _mm512_cvtepi32_ps(sumi), acc);
  }
  return _mm512_reduce_add_ps(acc) - _mm512_reduce_add_ps(_mm512_zextps256_ps512(acc_min));
}

float dot_q3_k(int64_t n, const void* w, const void* a) {
  static const GroupIdx G;
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
  const __m512i k4 = _mm512_set1_epi8(4);
  for (int64_t i = 0; i < n / 256; ++i, wb += 110, ab += 292) {
    prefetch_ahead(wb);
    prefetch_ahead(wb + 64);
    float da;
    std::memcpy(&da, ab, 4);
    const __m512i sw = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(q3k_scales_i8(wb + 96)));
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb));
    __m512i sumi = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 32 + 32 * h));
      for (int s2 = 0; s2 < 4; s2 += 2) {
        auto level = [&](int s) {  // u = low two bits | high bit << 2; the level is u - 4
          const __m256i lo = _mm256_and_si256(_mm256_srli_epi16(q, 2 * s), m3);
          const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * h + s), one);
          return _mm256_or_si256(lo, _mm256_slli_epi16(hb, 2));
        };
        const __m512i u = join(level(s2), level(s2 + 1));
        const __m512i y = _mm512_loadu_si512(ab + 4 + 128 * h + 32 * s2);
        const __m512i d16 = _mm512_sub_epi16(_mm512_maddubs_epi16(u, y), _mm512_maddubs_epi16(k4, y));
        sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(d16, _mm512_permutexvar_epi16(G.idx[2 * h + s2 / 2], sw)));
      }
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(f16(wb + 108) * da), _mm512_cvtepi32_ps(sumi), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

float dot_q5_k(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  float minus = 0;
  const __m256i m4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < n / 256; ++i, wb += 176, ab += 292) {
    float da;
    std::memcpy(&da, ab, 4);
    const ScaleMinWords u = scale_min_words_k4(wb + 4);
    const __m128i sm = _mm_set_epi32(static_cast<int>(u.w[3]), static_cast<int>(u.w[2]), static_cast<int>(u.w[1]),
                                     static_cast<int>(u.w[0]));
    const __m128i m8 = _mm_srli_si128(sm, 8);
    const __m256i mt = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8)),
                                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 260)));
    minus += f16(wb + 2) * da * static_cast<float>(_mm512_reduce_add_epi32(_mm512_zextsi256_si512(mt)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 16));
    __m512i sumi = _mm512_setzero_si512();
    uint8_t scb[8];
    std::memcpy(scb, u.w, 8);
    for (int j = 0; j < 4; ++j) {
      const __m256i q4 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 48 + 32 * j));
      const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one), 4);
      const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one), 4);
      const __m512i q = join(_mm256_or_si256(_mm256_and_si256(q4, m4), h0),
                             _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q4, 4), m4), h1));
      const __m512i y = _mm512_loadu_si512(ab + 4 + 64 * j);
      const __m512i sc = join(_mm256_set1_epi16(scb[2 * j]), _mm256_set1_epi16(scb[2 * j + 1]));
      sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(_mm512_maddubs_epi16(q, y), sc));
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(f16(wb) * da), _mm512_cvtepi32_ps(sumi), acc);
  }
  return _mm512_reduce_add_ps(acc) - minus;
}

float dot_iq4_xs(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n / 256; ++i, wb += 136, ab += 292) {
    float da;
    std::memcpy(&da, ab, 4);
    uint16_t sh;
    std::memcpy(&sh, wb + 2, 2);
    __m512i sumi = _mm512_setzero_si512();
    for (int ib = 0; ib < 8; ib += 2) {
      const int ls0 = ((wb[4 + ib / 2] >> 0) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
      const int ls1 = ((wb[4 + ib / 2] >> 4) & 0xf) | (((sh >> (2 * ib + 2)) & 3) << 4);
      const __m512i v = _mm512_shuffle_epi8(iq4_table(), join(nibbles(wb + 8 + 16 * ib), nibbles(wb + 24 + 16 * ib)));
      const __m512i y = _mm512_loadu_si512(ab + 4 + 32 * ib);
      const __mmask64 neg = _mm512_movepi8_mask(v);
      const __m512i p16 = _mm512_maddubs_epi16(_mm512_abs_epi8(v), _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y));
      const __m512i sc = join(_mm256_set1_epi16(static_cast<int16_t>(ls0 - 32)), _mm256_set1_epi16(static_cast<int16_t>(ls1 - 32)));
      sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(p16, sc));
    }
    acc = _mm512_fmadd_ps(_mm512_set1_ps(f16(wb) * da), _mm512_cvtepi32_ps(sumi), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

constexpr DotKernel q8_0(DotFn f) { return {StorageType::Q8_0, f, act_q8_0, Isa::avx512}; }
constexpr DotKernel q8_k(DotFn f) { return {StorageType::Q8_K, f, act_q8_k, Isa::avx512}; }

constexpr KernelEntry kEntries[] = {
    {StorageType::BF16, {StorageType::BF16, dot_bf16, act_bf16, Isa::avx512}},
    {StorageType::Q4_1, q8_0(dot_q4_1)},
    {StorageType::Q5_0, q8_0(dot_q5_0)},
    {StorageType::Q5_1, q8_0(dot_q5_1)},
    {StorageType::IQ4_NL, q8_0(dot_iq4_nl)},
    {StorageType::Q2_K, q8_k(dot_q2_k)},
    {StorageType::Q3_K, q8_k(dot_q3_k)},
    {StorageType::Q5_K, q8_k(dot_q5_k)},
    {StorageType::IQ4_XS, q8_k(dot_iq4_xs)},
};

}  // namespace

constinit const KernelTable kAvx512Extra{kEntries};

}  // namespace sy::cpu
