#version 450
// copy from a dense quantized tensor (-DWTYPE=<storage id>) into f32 of any strides: the
// SDK's dequantized values (dequant.glsl's dq32), 32 elements per invocation. Source
// element k (dense, so block k / 32) becomes destination element k in row-major order,
// as the CPU's convert_to_f32 reads the source as whole rows of the destination's length.
#include "common.glsl"
#include "elementwise.glsl"
#include "dequant.glsl"

void main() {
  FOR_EACH_ELEMENT(elements(DST) / 32u, u) {
    float v[32];
    dq32(base(SRC0), u, v);
    for (uint i = 0; i < 32u; ++i) st_f32(at4(DST, unflatten(DST, 32u * u + i)), v[i]);
  }
}
