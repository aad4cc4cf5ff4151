#version 450
// set_rows into an F32, F16 or BF16 cache: dst row slots[r] = rows r, converted with the
// SDK's rounding (nearest even, bit for bit). One thread per element; rows over y.
#include "common.glsl"
#include "set_rows_exact.glsl"

layout(local_size_x = 256) in;

uint bf16_bits(float f) {
  const uint u = floatBitsToUint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;  // quiet NaN
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

void main() {
  const int k = ne(SRC0, 0);
  const int i = int(gl_GlobalInvocationID.x);
  if (i >= k) return;
  const int n1 = ne(SRC0, 1), n2 = ne(SRC0, 2), rows = n1 * n2 * ne(SRC0, 3);
  const uint dt = pc.node.type[DST];
  for (int r = int(gl_WorkGroupID.y); r < rows; r += int(gl_NumWorkGroups.y)) {
    const int i1 = r % n1, i2 = (r / n1) % n2, i3 = r / (n1 * n2);
    const int slot = ld_i32(at(SRC1, r, 0, 0, 0));
    if (slot < 0 || slot >= ne(DST, 2)) continue;  // the CPU refuses the node; here it writes nothing
    const float x = ld_f32(at(SRC0, i, i1, i2, i3));
    const uint64_t row_addr = base(DST) + uint64_t(int64_t(slot) * nb(DST, 2));
    if (dt == T_F32) {
      st_f32(row_addr + uint64_t(i) * 4ul, x);
    } else if (dt == T_F16) {
      st_u16(row_addr + uint64_t(i) * 2ul, f16_bits(x));
    } else {
      st_u16(row_addr + uint64_t(i) * 2ul, bf16_bits(x));
    }
  }
}
