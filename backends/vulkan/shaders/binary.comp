#version 450
// y = a + b or a * b (F32); b broadcasts along every dimension where its size is 1.
#include "common.glsl"
#include "elementwise.glsl"

void main() {
  const ivec4 nb1 = ivec4(ne(SRC1, 0), ne(SRC1, 1), ne(SRC1, 2), ne(SRC1, 3));
  FOR_EACH_ELEMENT(elements(DST), i) {
    const ivec4 c = unflatten(DST, i);
    const ivec4 cb = ivec4(nb1.x == 1 ? 0 : c.x, nb1.y == 1 ? 0 : c.y, nb1.z == 1 ? 0 : c.z, nb1.w == 1 ? 0 : c.w);
    const float a = ld_f32(at4(SRC0, c)), b = ld_f32(at4(SRC1, cb));
#if defined(OP_ADD)
    st_f32(at4(DST, c), a + b);
#elif defined(OP_MUL)
    st_f32(at4(DST, c), a * b);
#else
#error "define OP_ADD or OP_MUL"
#endif
  }
}
