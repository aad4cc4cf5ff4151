#version 450
// y = silu(gate) * up, F32, one shape, any strides.
#include "common.glsl"
#include "elementwise.glsl"

void main() {
  FOR_EACH_ELEMENT(elements(DST), i) {
    const ivec4 c = unflatten(DST, i);
    st_f32(at4(DST, c), silu_f(ld_f32(at4(SRC0, c))) * ld_f32(at4(SRC1, c)));
  }
}
