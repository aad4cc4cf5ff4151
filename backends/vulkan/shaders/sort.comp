#version 450
// top_k and argsort, one workgroup per row: a bitonic sort of the row's (value, index)
// pairs in shared memory, descending by value with ties to the lower index. That order
// is total (for non-NaN values), so the result equals the CPU's stable ordering exactly.
// Rows up to MAX_N elements; the host pads the sort to the power of two up[0] and writes
// the first up[1] indices of each row (k for top_k, the row length for argsort) to the
// I32 destination, densely, row after row in x's row order.
#include "common.glsl"

#define WG 128
#define MAX_N 1024
layout(local_size_x = WG) in;

shared float key[MAX_N];
shared int idx[MAX_N];

// Whether entry a goes before entry b. Padding (index >= n) goes after everything.
bool before(int a, int b, int n) {
  const int ia = idx[a], ib = idx[b];
  if (ia >= n || ib >= n) return ia < ib;
  const float va = key[a], vb = key[b];
  return va > vb || (va == vb && ia < ib);
}

void main() {
  const int rows = ne(SRC0, 1) * ne(SRC0, 2) * ne(SRC0, 3);
  const int r = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  if (r >= rows) return;  // the whole workgroup leaves together, before any barrier
  const int n = ne(SRC0, 0), n1 = ne(SRC0, 1), n2 = ne(SRC0, 2);
  const uint64_t x = row(SRC0, r % n1, (r / n1) % n2, r / (n1 * n2));
  const int64_t sx = nb(SRC0, 0);
  const int padded = int(pc.node.up[0]), count = int(pc.node.up[1]);
  const int t = int(gl_LocalInvocationID.x);

  for (int i = t; i < padded; i += WG) {
    key[i] = i < n ? ld_f32(x + uint64_t(i * sx)) : 0.0;
    idx[i] = i;
  }
  barrier();
  for (int k = 2; k <= padded; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int p = t; p < padded / 2; p += WG) {
        const int a = 2 * j * (p / j) + (p % j), b = a + j;
        // Blocks with bit k clear end up in order, the others reversed (bitonic merge).
        const bool swap = (a & k) == 0 ? before(b, a, n) : before(a, b, n);
        if (swap) {
          const float kv = key[a];
          key[a] = key[b];
          key[b] = kv;
          const int iv = idx[a];
          idx[a] = idx[b];
          idx[b] = iv;
        }
      }
      barrier();
    }
  }
  const uint64_t dst = base(DST) + uint64_t(r) * uint64_t(count) * 4;
  for (int i = t; i < count; i += WG) st_i32(dst + uint64_t(i) * 4, idx[i]);
}
