#version 450
// softmax per row, one workgroup per row, in three passes over the row (max, sum of
// exponentials, scaled exponentials) so any row length works with fixed shared memory.
// A row that is all -inf (fully masked) gives zeros, as the CPU defines it. Each
// invocation writes only the elements it read, so y may be x.
// Built twice: the portable tree reductions, and -DSUBGROUP (subgroupMax/subgroupAdd per
// subgroup, then every invocation combines the per-subgroup values itself).
#include "common.glsl"
#ifdef SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

#define WG 128
layout(local_size_x = WG) in;

shared float partial[WG];

#ifdef SUBGROUP
float row_max(float v) {
  v = subgroupMax(v);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  barrier();
  float m = partial[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) m = max(m, partial[i]);
  barrier();  // everyone has read partial before the next reduction writes it
  return m;
}
float row_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) s += partial[i];
  return s;
}
#else
float row_max(float v) {
  const uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint w = WG / 2; w > 0; w >>= 1) {
    if (t < w) partial[t] = max(partial[t], partial[t + w]);
    barrier();
  }
  const float m = partial[0];
  barrier();  // everyone has read partial[0] before the next reduction writes it
  return m;
}
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
  const float neg_inf = uintBitsToFloat(0xff800000u);

  float m = neg_inf;
  for (int i = t; i < n; i += WG) m = max(m, ld_f32(x + uint64_t(i * sx)));
  m = row_max(m);
  if (m == neg_inf) {
    for (int i = t; i < n; i += WG) st_f32(y + uint64_t(i * sy), 0.0);
    return;
  }
  float s = 0.0;
  for (int i = t; i < n; i += WG) s += exp(ld_f32(x + uint64_t(i * sx)) - m);
  const float inv = 1.0 / row_sum(s);
  for (int i = t; i < n; i += WG) st_f32(y + uint64_t(i * sy), exp(ld_f32(x + uint64_t(i * sx)) - m) * inv);
}
