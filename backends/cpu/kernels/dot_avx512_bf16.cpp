// AVX-512 BF16 kernel (vdpbf16ps: pairs of bf16 products accumulated into f32) for BF16
// weights against BF16 activations. Built with -mavx512bf16 only.
#include "simd_avx512.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {
namespace {

float dot_bf16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const uint16_t*>(a);
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    avx512::prefetch_ahead(x + i);
    avx512::prefetch_ahead(x + i + 32);
    s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_loadu_si512(x + i), (__m512bh)_mm512_loadu_si512(y + i));
    s1 = _mm512_dpbf16_ps(s1, (__m512bh)_mm512_loadu_si512(x + i + 32), (__m512bh)_mm512_loadu_si512(y + i + 32));
  }
  for (; i + 32 <= n; i += 32)
    s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_loadu_si512(x + i), (__m512bh)_mm512_loadu_si512(y + i));
  float s = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
  for (; i < n; ++i) s += bf16_to_fp32(x[i]) * bf16_to_fp32(y[i]);
  return s;
}

constexpr KernelEntry kEntries[] = {
    {StorageType::BF16, {StorageType::BF16, dot_bf16, act_bf16, Isa::avx512}},
};

}  // namespace

constinit const KernelTable kAvx512Bf16{kEntries};

}  // namespace sy::cpu
