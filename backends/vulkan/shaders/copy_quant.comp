#version 450
// copy from f32 into a dense Q8_0 or Q4_0 tensor (-DQ8_0 or -DQ4_0): the source's rows
// (any strides, a whole number of blocks long) quantized as the CPU's convert_from_f32
// does, row after row, by quantize_block (bit for bit). One workgroup per block; blocks
// are numbered in the source's row-major order, which is where the dense destination
// keeps them whatever its shape.
#include "common.glsl"
#include "set_rows_exact.glsl"
#include "quant_block.glsl"

layout(local_size_x = 64) in;

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int per_row = ne(SRC0, 0) / 32, n1 = ne(SRC0, 1), n2 = ne(SRC0, 2);
  const int blocks = per_row * n1 * n2 * ne(SRC0, 3);
  for (int j = int(gl_WorkGroupID.x); j < blocks; j += int(gl_NumWorkGroups.x)) {
    const int r = j / per_row, b = j % per_row;
    barrier();  // the previous block's readers of xs and levels are done
    if (tid < 32) xs[tid] = ld_f32(at(SRC0, 32 * b + tid, r % n1, (r / n1) % n2, r / (n1 * n2)));
    barrier();
    quantize_block(tid, base(DST) + uint64_t(j) * uint64_t(BLOCK_BYTES));
  }
}
