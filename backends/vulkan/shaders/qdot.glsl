// The activations' side of matmul for one weight type: which dot type the CPU converts
// activations to (ACT, act_layout.glsl) and, for the quantized types, the integer dot of a
// weight unit with its q8 activations, computed as backends/cpu/kernels/dot_scalar.cpp
// does: integer sums per 32-element block (Q8_0 activations) or per 16-element group
// (Q8_K), then the same float products of the scales, `precise` so no fused multiply-add
// rounds them differently. Requires common.glsl and dequant.glsl.
#if W_PLAIN
#if WTYPE == WT_BF16
#define ACT ACT_BF16  // dot_bf16 pairs BF16 weights with bf16-rounded activations
#else
#define ACT ACT_NONE  // F32 and F16 weights meet the f32 activations as they are
#endif
#elif W_KQUANT
#define ACT ACT_Q8_K
#else
#define ACT ACT_Q8_0
#endif
#include "act_layout.glsl"

#if !W_PLAIN
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer QRow { uint v[]; };

/// Unit u of the weight row at w against column a's converted activations (k per column).
float qdot(uint64_t w, uint u, uint64_t a, uint k) {
  WUnit wu;
  wunit(w, u, wu);
  QRow q = QRow(a + 32 * uint64_t(u));
  int s[2] = int[2](0, 0), qs[2] = int[2](0, 0);  // per 16 elements: sum lv * q, sum q
  for (uint p = 0; p < 2; ++p)
    for (uint w4 = 0; w4 < 4; ++w4) {
      const uint qw = q.v[4 * p + w4];
      for (uint i = 0; i < 4; ++i) {
        const int qa = sbyte_of(qw, i);
        s[p] += wu.lv[16 * p + 4 * w4 + i] * qa;
        qs[p] += qa;
      }
    }
#if ACT == ACT_Q8_0
  const float da = F32Row(a + k).v[u];
  precise const float r = wu.d * da * float(s[0] + s[1]) + wu.m * da * float(qs[0] + qs[1]);
#else
  const float da = F32Row(a + k).v[u / 8];
  precise const float r = wu.d * da * float(wu.sc[0] * s[0] + wu.sc[1] * s[1]) -
                          wu.m * da * float(wu.mn[0] * qs[0] + wu.mn[1] * qs[1]);
#endif
  return r;
}
#endif
