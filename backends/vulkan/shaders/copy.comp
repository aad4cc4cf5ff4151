#version 450
// Copies elements in row-major order: element k of the source (by its shape) becomes
// element k of the destination (by its shape), so a copy can also reshape. Each side may
// have any strides; SRC_F16 / DST_F16 convert from and to f16.
#include "common.glsl"
#include "elementwise.glsl"

void main() {
  FOR_EACH_ELEMENT(elements(DST), k) {
#ifdef SRC_F16
    const float x = ld_f16(at4(SRC0, unflatten(SRC0, k)));
#else
    const float x = ld_f32(at4(SRC0, unflatten(SRC0, k)));
#endif
#ifdef DST_F16
    st_f16(at4(DST, unflatten(DST, k)), x);
#else
    st_f32(at4(DST, unflatten(DST, k)), x);
#endif
  }
}
