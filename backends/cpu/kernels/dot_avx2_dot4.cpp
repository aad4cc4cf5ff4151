// AVX2 prefill micro-kernels (one weight row against four activation rows) for Q4_0, Q5_K
// and IQ4_XS: each weight block is unpacked once for the four rows, the same arithmetic as
// the single-row kernels of dot_avx2.cpp. Built with the AVX2 flags, and with AVX-VNNI.
#include <cstring>

#include "dot_tables.hpp"
#include "kquant_scales.hpp"
#include "kquant_scales_simd.hpp"
#include "simd_avx2.hpp"

namespace sy::cpu {
namespace {

using namespace avx2;
using u8 = uint8_t;

inline __m256i load(const u8* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

void dot4_q4_0(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  // Block j of each row goes to accumulator j % 2, as in the single-row kernel.
  __m256 acc[2][4];
  for (auto& row : acc)
    for (auto& v : row) v = _mm256_setzero_ps();
  const __m256i off = _mm256_set1_epi8(8);
  for (int64_t i = 0; i < n / 32; ++i, wb += 18, ab += 34) {
    if (i % 4 == 0) prefetch_ahead(wb);
    const __m256i q = _mm256_sub_epi8(nibbles(wb + 2), off);
    const __m256i aq = _mm256_sign_epi8(q, q);
    const float dw = f16(wb);
    auto& ac = acc[i & 1];
    for (int r = 0; r < 4; ++r) {
      const u8* ar = ab + r * stride;
      const __m256i p = dpbusd(_mm256_setzero_si256(), aq, _mm256_sign_epi8(load(ar + 2), q));
      ac[r] = _mm256_fmadd_ps(_mm256_set1_ps(dw * f16(ar)), _mm256_cvtepi32_ps(p), ac[r]);
    }
  }
  for (int r = 0; r < 4; ++r) out[r] = hsum(_mm256_add_ps(acc[0][r], acc[1][r]));
}

void dot4_q5_k(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  __m256 minus[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  const __m256i m4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < n / 256; ++i, wb += 176, ab += 292) {
    for (int l = 0; l < 176; l += 64) prefetch_ahead(wb + l);
    const ScaleMinWords u = scale_min_words_k4(wb + 4);
    uint8_t sm[8];
    std::memcpy(sm, u.w, 8);
    const float d = f16(wb), dmin = f16(wb + 2);
    float da[4];
    for (int r = 0; r < 4; ++r) {
      std::memcpy(&da[r], ab + r * stride, 4);
      minus[r] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * da[r]), k4_min_terms(u, ab + r * stride + 260), minus[r]);
    }
    __m256i qh = load(wb + 16);
    __m256i sumi[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int j = 0; j < 4; ++j, qh = _mm256_srli_epi16(qh, 2)) {
      const __m256i q4 = load(wb + 48 + 32 * j);
      const __m256i lo = _mm256_or_si256(_mm256_and_si256(q4, m4), _mm256_slli_epi16(_mm256_and_si256(qh, one), 4));
      const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q4, 4), m4),
                                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 1), one), 4));
      const __m256i s0 = _mm256_set1_epi16(sm[2 * j]), s1 = _mm256_set1_epi16(sm[2 * j + 1]);
      for (int r = 0; r < 4; ++r) {
        const u8* q8 = ab + r * stride + 4 + 64 * j;
        sumi[r] = dpwssd(dpwssd(sumi[r], _mm256_maddubs_epi16(lo, load(q8)), s0), _mm256_maddubs_epi16(hi, load(q8 + 32)), s1);
      }
    }
    for (int r = 0; r < 4; ++r) acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * da[r]), _mm256_cvtepi32_ps(sumi[r]), acc[r]);
  }
  for (int r = 0; r < 4; ++r) out[r] = hsum(acc[r]) - hsum(minus[r]);
}

void dot4_iq4_xs(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  const __m256i table = _mm256_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
                                         -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t i = 0; i < n / 256; ++i, wb += 136, ab += 292) {
    for (int l = 0; l < 136; l += 64) prefetch_ahead(wb + l);
    uint16_t sh;
    std::memcpy(&sh, wb + 2, 2);
    __m256i sumi[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((wb[4 + ib / 2] >> (4 * (ib % 2))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
      const __m256i v = _mm256_shuffle_epi8(table, nibbles(wb + 8 + 16 * ib));
      const __m256i av = _mm256_sign_epi8(v, v);
      const __m256i sc = _mm256_set1_epi16(static_cast<int16_t>(ls - 32));
      for (int r = 0; r < 4; ++r) {
        const __m256i y = load(ab + r * stride + 4 + 32 * ib);
        sumi[r] = dpwssd(sumi[r], _mm256_maddubs_epi16(av, _mm256_sign_epi8(y, v)), sc);
      }
    }
    const float d = f16(wb);
    for (int r = 0; r < 4; ++r) {
      float da;
      std::memcpy(&da, ab + r * stride, 4);
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * da), _mm256_cvtepi32_ps(sumi[r]), acc[r]);
    }
  }
  for (int r = 0; r < 4; ++r) out[r] = hsum(acc[r]);
}

// Only the 4-row kernels: dot_kernel_avx2() adds them to dot_avx2.cpp's entries.
constexpr KernelEntry kEntries[] = {
    {StorageType::Q4_0, {.dot4 = dot4_q4_0}},
    {StorageType::Q5_K, {.dot4 = dot4_q5_k}},
    {StorageType::IQ4_XS, {.dot4 = dot4_iq4_xs}},
};

}  // namespace

constinit const KernelTable SY_AVX2_TABLE(kAvx2Dot4){kEntries};

}  // namespace sy::cpu
