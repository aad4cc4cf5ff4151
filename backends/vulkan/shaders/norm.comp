#version 450
// rms_norm and l2_norm, one workgroup per row: a row is read twice (sum of squares, then
// the scaled copy) instead of being cached, so any row length works with fixed shared
// memory. Each invocation writes only the elements it read, so y may be x.
//
// up[0]: 0 rms_norm (x / sqrt(mean(x^2) + eps)), 1 l2_norm (x / max(|x|, eps)).
// Built twice: the portable tree reduction, and -DSUBGROUP (subgroupAdd per subgroup,
// then every invocation adds the per-subgroup sums itself, in the same order).
#include "common.glsl"
#ifdef SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

#define WG 128
layout(local_size_x = WG) in;

#ifdef SUBGROUP
shared float partial[WG];  // one per subgroup; WG bounds the subgroup count
float row_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) s += partial[i];
  return s;
}
#else
shared float partial[WG];
float row_sum(float v) {
  const uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint w = WG / 2; w > 0; w >>= 1) {
    if (t < w) partial[t] += partial[t + w];
    barrier();
  }
  return partial[0];
}
#endif

void main() {
  const int rows = ne(SRC0, 1) * ne(SRC0, 2) * ne(SRC0, 3);
  const int r = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  if (r >= rows) return;  // the whole workgroup leaves together, before any barrier
  const int n = ne(SRC0, 0), n1 = ne(SRC0, 1), n2 = ne(SRC0, 2);
  const int i1 = r % n1, i2 = (r / n1) % n2, i3 = r / (n1 * n2);
  const uint64_t x = row(SRC0, i1, i2, i3), y = row(DST, i1, i2, i3);
  const int64_t sx = nb(SRC0, 0), sy = nb(DST, 0);
  const int t = int(gl_LocalInvocationID.x);

  float ss = 0.0;
  for (int i = t; i < n; i += WG) {
    const float v = ld_f32(x + uint64_t(i * sx));
    ss += v * v;
  }
  ss = row_sum(ss);
  const float eps = pc.node.fp[0];
  const float s = pc.node.up[0] == 0u ? 1.0 / sqrt(ss / float(n) + eps) : 1.0 / max(sqrt(ss), eps);
  for (int i = t; i < n; i += WG) st_f32(y + uint64_t(i * sy), ld_f32(x + uint64_t(i * sx)) * s);
}
