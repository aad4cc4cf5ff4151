#version 450
// moe_combine: out[i, t] = sum over j of y[i, j, t] * w[j, t], j in order (the CPU's).
// One invocation per output element. Slots: SRC0 y F32 [d, used, tokens], SRC1 w F32
// [used, tokens], DST F32 [d, tokens]; any strides.
#include "common.glsl"

#define WG 64
layout(local_size_x = WG) in;

void main() {
  const int d = ne(DST, 0), tokens = ne(DST, 1), used = ne(SRC0, 1);
  const int id = int((gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * WG + gl_LocalInvocationID.x);
  if (id >= d * tokens) return;
  const int i = id % d, t = id / d;
  float s = 0.0;
  for (int j = 0; j < used; ++j) s += ld_f32(at(SRC0, i, j, t, 0)) * ld_f32(at(SRC1, j, t, 0, 0));
  st_f32(at(DST, i, t, 0, 0), s);
}
