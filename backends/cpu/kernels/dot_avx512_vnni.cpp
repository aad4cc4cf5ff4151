// AVX-512 VNNI variants (vpdpbusd: u8 x s8 products summed into int32 in one instruction)
// for the 32-element types where it removes work: Q4_0 needs no sign fix-up at all, since
// sum((q - 8) * y) = sum(q * y) - 8 * sum(y) with q unsigned.
#include "simd_avx512.hpp"

namespace sy::cpu {
namespace {

using namespace avx512;

float dot_q4_0(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  const __m512i eight = _mm512_set1_epi8(8);
  const int64_t nb = n / 32;
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2, wb += 36, ab += 68) {
    const __m512i q = join(nibbles(wb + 2), nibbles(wb + 20));
    const __m512i y = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 36)));
    const __m512i p = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q, y),
                                       _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, y));
    acc = _mm512_fmadd_ps(join(f16(wb) * f16(ab), f16(wb + 18) * f16(ab + 34)), _mm512_cvtepi32_ps(p), acc);
  }
  float s = _mm512_reduce_add_ps(acc);
  if (i < nb) {
    const __m512i q = join(nibbles(wb + 2), _mm256_setzero_si256());
    const __m512i y = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)), _mm256_setzero_si256());
    const __m512i p = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q, y),
                                       _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, y));
    s += f16(wb) * f16(ab) * static_cast<float>(_mm512_reduce_add_epi32(p));
  }
  return s;
}

// Q8_0 x Q8_0: signs move to y (|x| is unsigned), then one vpdpbusd.
inline __m512i dot_i8_vnni(__m512i x, __m512i y) {
  const __mmask64 neg = _mm512_movepi8_mask(x);
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(x),
                             _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y));
}

float dot_q8_0(int64_t n, const void* w, const void* a) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  __m512 acc = _mm512_setzero_ps();
  const int64_t nb = n / 32;
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2, wb += 68, ab += 68) {
    const __m512i qx = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 2)),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 36)));
    const __m512i qy = join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 36)));
    acc = _mm512_fmadd_ps(join(f16(wb) * f16(ab), f16(wb + 34) * f16(ab + 34)), _mm512_cvtepi32_ps(dot_i8_vnni(qx, qy)), acc);
  }
  float s = _mm512_reduce_add_ps(acc);
  if (i < nb) {
    const __m512i p = dot_i8_vnni(join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + 2)), _mm256_setzero_si256()),
                                  join(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab + 2)), _mm256_setzero_si256()));
    s += f16(wb) * f16(ab) * static_cast<float>(_mm512_reduce_add_epi32(p));
  }
  return s;
}

}  // namespace

DotKernel dot_kernel_avx512_vnni(StorageType w) {
  using T = StorageType;
  switch (w) {
    case T::Q4_0: return {T::Q8_0, dot_q4_0, act_q8_0, Isa::avx512};
    case T::Q8_0: {
      DotKernel k = dot_kernel_avx512(w);  // keeps the 4-row kernel
      k.dot = dot_q8_0;
      return k;
    }
    default: return {};
  }
}

}  // namespace sy::cpu
