#version 450
// Copies elements in row-major order: element k of the source (by its shape) becomes
// element k of the destination (by its shape), so a copy can also reshape. Each side may
// have any strides; SRC_F16 / DST_F16 and SRC_BF16 / DST_BF16 convert from and to f16 and
// bf16 (kernels/elementwise.cpp keeps a converted side dense, as the CPU reads it).
#include "common.glsl"
#include "elementwise.glsl"

void main() {
  FOR_EACH_ELEMENT(elements(DST), k) {
#if defined(SRC_F16)
    const float x = ld_f16(at4(SRC0, unflatten(SRC0, k)));
#elif defined(SRC_BF16)
    const float x = ld_bf16(at4(SRC0, unflatten(SRC0, k)));
#else
    const float x = ld_f32(at4(SRC0, unflatten(SRC0, k)));
#endif
#if defined(DST_F16)
    st_f16(at4(DST, unflatten(DST, k)), x);
#elif defined(DST_BF16)
    // The SDK's fp32_to_bf16: nearest even; a NaN stays a (quiet) NaN.
    const uint u = floatBitsToUint(x);
    st_u16(at4(DST, unflatten(DST, k)),
           (u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : (u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
    st_f32(at4(DST, unflatten(DST, k)), x);
#endif
  }
}
