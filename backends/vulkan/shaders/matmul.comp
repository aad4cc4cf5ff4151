#version 450
// matmul (and, with -DMATMUL_ID=1, matmul_id): dst[r, c] = W row r . X column c, with W in
// any storage type dequant.glsl decodes (-DWTYPE) and X, dst in f32. As on the CPU, X is
// first converted to the weight type's dot type (qdot.glsl: q8_0, q8_K or bf16) by the
// prep shader act_quant.comp into the node's scratch; quantized weights then meet it in
// integer dot products per block, F32/F16 and FP8 weights read X itself.
//
// A workgroup computes one weight row against LANES activation columns: its 64 threads
// form LANES groups of WG / LANES, one group per column, each splitting the row's
// 32-element units among its threads. With LANES = 8 a unit is decoded by the eight
// threads that need it (cheap next to reading it, and the code stays as small as with one
// column, which keeps driver compile times down). Rows fold over groups.x and groups.z (a
// 150k-row vocabulary fits the 65535 limit of one dimension); column groups loop over
// groups.y. For matmul_id a column is a (slot, token) pair and reads the rows of its own
// expert, so pairs with different experts share a workgroup at no cost.
//
// -DSUBGROUP=1 (LANES = 1 only) reduces with subgroupAdd and one shared slot per subgroup;
// otherwise a shared-memory tree (the portable path). -DINT_DOT=1 (quantized types) forms
// the per-block integer sums with packed dot products (qdot.glsl): the same integers, so
// the same output as without it under the same reduction.
#if SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#if INT_DOT
#include "int_dot.glsl"
#endif
#include "common.glsl"
#include "dequant.glsl"
#include "qdot.glsl"

#define WG 64
#define UL (WG / LANES)  // threads per column
#if SUBGROUP && LANES != 1
#error "the subgroup reduction sums the whole workgroup: LANES must be 1"
#endif
layout(local_size_x = WG) in;

shared float red[WG];

// Sum of acc over each column's UL threads, valid in the column's first thread.
float reduce(float acc) {
  const uint tid = gl_LocalInvocationID.x;
#if SUBGROUP
  const float s = subgroupAdd(acc);
  if (subgroupElect()) red[gl_SubgroupID] = s;
  barrier();
  float total = 0.0;
  if (tid == 0)
    for (uint g = 0; g < gl_NumSubgroups; ++g) total += red[g];
#else
  red[tid] = acc;
  barrier();
  const uint ul = tid % UL;
  for (uint s = UL / 2; s > 0; s >>= 1) {
    if (ul < s) red[tid] += red[tid + s];
    barrier();
  }
  const float total = red[tid];
#endif
  barrier();  // red is reused by the next column group
  return total;
}

// This thread's share of W row w (k elements at byte address w) . the column at x (f32,
// or converted activations at act_col()): units ul, ul + UL, ...
float partial(uint64_t w, uint k, uint64_t x, uint ul) {
  float acc = 0.0;
  const uint units = k / 32;
#if !W_FLOAT
  for (uint u = ul; u < units; u += UL) acc += qdot(w, u, x, k);
  return acc;
#else
  for (uint u = ul; u < units; u += UL) {
    float v[32];
    dq32(w, u, v);
    F32Row xr = F32Row(x + 128 * uint64_t(u));
    float s = 0.0;
    for (uint i = 0; i < 32; ++i) s += v[i] * xr.v[i];
    acc += s;
  }
#if W_PLAIN
  F32Row xr = F32Row(x);
  for (uint i = units * 32 + ul; i < k; i += UL) acc += dq1(w, i) * xr.v[i];
#endif
  return acc;
#endif
}

void main() {
  const uint rows = uint(ne(SRC0, 1));
  const uint r = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.z;
  if (r >= rows) return;  // the whole workgroup leaves together
  const uint k = uint(ne(SRC0, 0));
  const uint tid = gl_LocalInvocationID.x, lane = tid / UL, ul = tid % UL;

#if MATMUL_ID
  // ids [used, tokens]; X [k, 1 or used, tokens]; W [k, rows, experts]; dst [rows, used, tokens].
  const uint used = uint(ne(SRC2, 0)), pairs = used * uint(ne(SRC2, 1));
  const int experts = ne(SRC0, 2);
  const bool x_shared = ne(SRC1, 1) == 1;
  for (uint p0 = gl_WorkGroupID.y * LANES; p0 < pairs; p0 += gl_NumWorkGroups.y * LANES) {
    const uint p = p0 + lane;
    const int j = int(p % used), t = int(p / used);
    float acc = 0.0;
    if (p < pairs) {
      const int e = ld_i32(at(SRC2, j, t, 0, 0));
      // A bad id gives a zero row (the CPU reports it; a kernel cannot).
      const int xj = x_shared ? 0 : j;
#if ACT == ACT_NONE
      const uint64_t x = row(SRC1, xj, t, 0);
#else
      const uint64_t x = act_col(uint(xj + ne(SRC1, 1) * t), k);
#endif
      if (e >= 0 && e < experts) acc = partial(row(SRC0, int(r), e, 0), k, x, ul);
    }
    const float total = reduce(acc);
    if (ul == 0 && p < pairs) st_f32(at(DST, int(r), j, t, 0), total);
  }
#else
  // Column c of X [k, m...] and dst [rows, m...] is (i1, i2, i3), in either's own strides.
  const int n1 = ne(SRC1, 1), n2 = ne(SRC1, 2);
  const uint m = uint(n1 * n2 * ne(SRC1, 3));
  const uint64_t w = row(SRC0, int(r), 0, 0);
  for (uint c0 = gl_WorkGroupID.y * LANES; c0 < m; c0 += gl_NumWorkGroups.y * LANES) {
    const int c = int(c0 + lane);
    const int i1 = c % n1, i2 = (c / n1) % n2, i3 = c / (n1 * n2);
    float acc = 0.0;
#if ACT == ACT_NONE
    const uint64_t x = row(SRC1, i1, i2, i3);
#else
    const uint64_t x = act_col(uint(c), k);
#endif
    if (uint(c) < m) acc = partial(w, k, x, ul);
    const float total = reduce(acc);
    if (ul == 0 && uint(c) < m) st_f32(at(DST, int(r), i1, i2, i3), total);
  }
#endif
}
