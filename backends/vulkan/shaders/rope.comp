#version 450
// Rotary position embedding, y = rope(x) (y may be x). One invocation per unit of a row
// [head_dim] of x [head_dim, heads, tokens, n3]: units 0..n_dims/2-1 rotate a pair, the
// rest copy one of the trailing head_dim - n_dims dimensions unchanged.
//
// ip: [0] mode (0 normal: pairs (2i, 2i+1); 1 neox, 2 multi: pairs (i, i + n_dims/2)),
//     [1] n_dims, [2..5] multi's sections (frequency indices per position component).
// fp: [1] freq_scale (0 means 1). Slot SRC1: positions, I32, one per token, or for multi
// [4][tokens] component-major. Slot SRC2: optional F32 frequency factors [n_dims/2].
// up: [0] log2(freq_base) (float bits, from the host in double), [1] units per row.
#include "common.glsl"

#define WG 64
layout(local_size_x = WG) in;

// 2*pi = C1 + C2 with C1 short enough that k * C1 is exact for k < 2^16, so reducing
// theta to [-pi, pi] keeps the accuracy theta has (sin/cos are only accurate there).
const float C1 = 6.28125;
const float C2 = 1.9353071795864769e-3;

void main() {
  const uint units = pc.node.up[1];
  const int n1 = ne(DST, 1), n2 = ne(DST, 2), n3 = ne(DST, 3);
  const uint64_t id = uint64_t(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * WG + gl_LocalInvocationID.x;
  const uint64_t total = uint64_t(units) * uint64_t(n1 * n2 * n3);
  if (id >= total) return;
  const int u = int(id % units), r = int(id / units);
  const int h = r % n1, tok = (r / n1) % n2, i3 = r / (n1 * n2);
  const int n_dims = pc.node.ip[1], half_dims = n_dims / 2;

  if (u >= half_dims) {  // a dimension past n_dims: copied
    const int i = n_dims + (u - half_dims);
    st_f32(at(DST, i, h, tok, i3), ld_f32(at(SRC0, i, h, tok, i3)));
    return;
  }
  const int mode = pc.node.ip[0];
  int comp = 0;  // which position component this frequency index takes (multi only)
  if (mode == 2) {
    const int e0 = pc.node.ip[2], e1 = e0 + pc.node.ip[3], e2 = e1 + pc.node.ip[4], e3 = e2 + pc.node.ip[5];
    const int k = u % e3;  // sections repeat when they cover fewer than n_dims/2 indices
    comp = k < e0 ? 0 : k < e1 ? 1 : k < e2 ? 2 : 3;
  }
  const float p = float(ld_i32(base(SRC1) + uint64_t(comp * n2 + tok) * 4));
  const float scale = pc.node.fp[1] == 0.0 ? 1.0 : pc.node.fp[1];
  const float inv_freq = exp2(uintBitsToFloat(pc.node.up[0]) * (-2.0 * float(u) / float(n_dims)));
  float theta = p * scale * inv_freq;
  if (base(SRC2) != 0ul) theta /= ld_f32(base(SRC2) + uint64_t(u) * 4);
  const float k = round(theta / (C1 + C2));
  precise float red = (theta - k * C1) - k * C2;
  const float c = cos(red), s = sin(red);

  const int a = mode == 0 ? 2 * u : u;
  const int b = mode == 0 ? 2 * u + 1 : u + half_dims;
  const float x0 = ld_f32(at(SRC0, a, h, tok, i3)), x1 = ld_f32(at(SRC0, b, h, tok, i3));
  st_f32(at(DST, a, h, tok, i3), x0 * c - x1 * s);
  st_f32(at(DST, b, h, tok, i3), x0 * s + x1 * c);
}
