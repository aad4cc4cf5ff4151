#version 450
// gather_cols: dst[j, r] = x[ids[j], r] (an act-order linear's input order). F32 x and dst
// of one row shape, any strides; ids dense i32 [m]. A copy, so exact. An id outside x's
// row gives 0: the CPU reports it as an error, a kernel cannot.
#include "common.glsl"
#include "elementwise.glsl"

void main() {
  const int k = ne(SRC0, 0);
  FOR_EACH_ELEMENT(elements(DST), i) {
    const ivec4 c = unflatten(DST, i);
    const int id = ld_i32(base(SRC1) + uint64_t(4 * c.x));
    const bool ok = id >= 0 && id < k;
    st_f32(at4(DST, c), ok ? ld_f32(at(SRC0, ok ? id : 0, c.y, c.z, c.w)) : 0.0);
  }
}
