#version 450
// get_rows: dst row i = table row ids[i], decoded to f32 (-DWTYPE: the table's type).
// One workgroup per output row (folded over groups.x and groups.z); its threads take the
// row's 32-element units (or single elements for plain types). An id outside the table
// gives a zero row: the CPU reports it as an error, a kernel cannot.
#include "common.glsl"
#include "dequant.glsl"

#define WG 64
layout(local_size_x = WG) in;

// Element i of tensor t counted in its own shape, dims 1..3 (row i of a [k, a, b, c] tensor).
uint64_t nth_row(int t, int i) {
  const int n1 = ne(t, 1), n2 = ne(t, 2);
  return row(t, i % n1, (i / n1) % n2, i / (n1 * n2));
}

void main() {
  const int m = ne(DST, 1) * ne(DST, 2) * ne(DST, 3);
  const int i = int(gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.z);
  if (i >= m) return;
  const uint k = uint(ne(SRC0, 0));
  const uint tid = gl_LocalInvocationID.x;
  // ids [m] in whatever shape it has: element i by its own strides.
  const int n0 = ne(SRC1, 0), n1 = ne(SRC1, 1);
  const int id = ld_i32(at(SRC1, i % n0, (i / n0) % n1, i / (n0 * n1) % ne(SRC1, 2), i / (n0 * n1 * ne(SRC1, 2))));
  const bool ok = id >= 0 && id < ne(SRC0, 1);
  const uint64_t src = row(SRC0, ok ? id : 0, 0, 0);
  const uint64_t dst = nth_row(DST, i);
  const int64_t ds = nb(DST, 0);
  const uint units = k / 32;
  for (uint u = tid; u < units; u += WG) {
    float v[32];
    if (ok) dq32(src, u, v);
    for (uint j = 0; j < 32; ++j) st_f32(dst + uint64_t(int64_t(32 * u + j) * ds), ok ? v[j] : 0.0);
  }
#if W_PLAIN
  for (uint j = units * 32 + tid; j < k; j += WG) st_f32(dst + uint64_t(int64_t(j) * ds), ok ? dq1(src, j) : 0.0);
#endif
}
