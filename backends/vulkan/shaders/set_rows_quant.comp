#version 450
// set_rows into a Q8_0 or Q4_0 cache (-DQ8_0 or -DQ4_0), giving each 32-element block the
// bytes the SDK's quantize_row gives it (quant_block.glsl's scale search). One workgroup
// per block: blocks of a row over x, rows over y.
#include "common.glsl"
#include "set_rows_exact.glsl"
#include "quant_block.glsl"

layout(local_size_x = 64) in;

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int b = int(gl_WorkGroupID.x);
  const int n1 = ne(SRC0, 1), n2 = ne(SRC0, 2), rows = n1 * n2 * ne(SRC0, 3);
  for (int r = int(gl_WorkGroupID.y); r < rows; r += int(gl_NumWorkGroups.y)) {
    const int i1 = r % n1, i2 = (r / n1) % n2, i3 = r / (n1 * n2);
    const int slot = ld_i32(at(SRC1, r, 0, 0, 0));
    if (slot < 0 || slot >= ne(DST, 2)) continue;  // uniform: the CPU refuses the node; here nothing is written
    barrier();  // the previous row's readers of xs and levels are done
    if (tid < 32) xs[tid] = ld_f32(at(SRC0, b * 32 + tid, i1, i2, i3));
    barrier();
    quantize_block(tid, base(DST) + uint64_t(int64_t(slot) * nb(DST, 2)) + uint64_t(b) * uint64_t(BLOCK_BYTES));
  }
}
