#version 450
// concat: dst = [a | b] along dimension ip[0]; one invocation per destination element,
// which takes its value from a, or from b shifted back by a's extent. Any strides.
#include "common.glsl"

#define WG 64
layout(local_size_x = WG) in;

void main() {
  const int n0 = ne(DST, 0), n1 = ne(DST, 1), n2 = ne(DST, 2), n3 = ne(DST, 3);
  const int id = int((gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * WG + gl_LocalInvocationID.x);
  if (id >= n0 * n1 * n2 * n3) return;
  const int i0 = id % n0, i1 = (id / n0) % n1, i2 = (id / (n0 * n1)) % n2, i3 = id / (n0 * n1 * n2);
  const int dim = pc.node.ip[0];
  const int split = ne(SRC0, dim);
  int j[4] = int[4](i0, i1, i2, i3);
  int src = SRC0;
  if (j[dim] >= split) {
    src = SRC1;
    j[dim] -= split;
  }
  st_f32(at(DST, i0, i1, i2, i3), ld_f32(at(src, j[0], j[1], j[2], j[3])));
}
