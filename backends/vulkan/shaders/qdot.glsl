// The activations' side of matmul for one weight type: which dot type the CPU converts
// activations to (ACT, act_layout.glsl) and, for the quantized types, the integer dot of a
// weight unit with its q8 activations, computed as backends/cpu/kernels/dot_scalar.cpp
// does: integer sums per 32-element block (Q8_0 activations) or per 16-element group
// (Q8_K), then the same float products of the scales, `precise` so no fused multiply-add
// rounds them differently (the grouped integers' zero-point term per block, where the CPU
// reads it per group from its activation sums). FP8 weights are dotted in floats
// (matmul.comp), as the CPU's dot_fp8. Requires common.glsl and dequant.glsl.
//
// -DINT_DOT=1 (after int_dot.glsl): the integer sums come from packed 4 x 8-bit dot
// products of the weight levels with the activation words. The sums are exact either way,
// so the result is the portable path's, bit for bit.
#if W_PLAIN
#if WTYPE == WT_BF16
#define ACT ACT_BF16  // dot_bf16 pairs BF16 weights with bf16-rounded activations
#else
#define ACT ACT_NONE  // F32 and F16 weights meet the f32 activations as they are
#endif
#elif W_FP8
#define ACT ACT_NONE  // dot_fp8: the decoded weights times the f32 activations
#elif W_KQUANT
#define ACT ACT_Q8_K
#else
#define ACT ACT_Q8_0
#endif
#include "act_layout.glsl"

#if !W_FLOAT
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer QRow { uint v[]; };

#if INT_DOT
// Block bytes of the types packed straight from their quants (dequant.glsl's layouts).
#if WTYPE == WT_Q8_0
#define W_BB_OF 34
#elif WTYPE == WT_Q4_0 || WTYPE == WT_Q4_1 || WTYPE == WT_Q5_0 || WTYPE == WT_Q5_1
#define W_BB_OF W_BB
#endif
/// Bits 0..3 of h moved to bit 4 of bytes 0..3: Q5's fifth bits beside their nibbles.
uint fifth_bits(uint h) {
  return ((h & 1u) | ((h & 2u) << 7) | ((h & 4u) << 14) | ((h & 8u) << 21)) << 4;
}

// Unit u's levels four to a word as the activations are stored (byte i of word j is
// element 4j + i), each as level + zero, where zero makes the 4- and 5-bit types' stored
// nibbles usable as they are; wu gets the unit's scales (its lv only where packed from it).
void wunit_packed(uint64_t row, uint u, out WUnit wu, out uint lw[8], out int zero) {
#if WTYPE == WT_Q8_0 || WTYPE == WT_Q4_0 || WTYPE == WT_Q4_1 || WTYPE == WT_Q5_0 || WTYPE == WT_Q5_1
  U16Row b = U16Row(row + uint64_t(u) * W_BB_OF);
  wu.d = h16(b, 0);
  wu.m = WTYPE == WT_Q4_1 || WTYPE == WT_Q5_1 ? h16(b, 2) : 0.0;
#if WTYPE == WT_Q8_0
  zero = 0;
  for (uint j = 0; j < 8; ++j) lw[j] = w32(b, 2 + 4 * j);
#elif WTYPE == WT_Q4_0 || WTYPE == WT_Q4_1
  zero = WTYPE == WT_Q4_0 ? 8 : 0;
  for (uint j = 0; j < 4; ++j) {  // byte i of a quant word: element 4j + i low, + 16 high
    const uint q = w32(b, W_QS + 4 * j);
    lw[j] = q & 0x0f0f0f0fu;
    lw[4 + j] = (q >> 4) & 0x0f0f0f0fu;
  }
#else
  zero = WTYPE == WT_Q5_0 ? 16 : 0;
  const uint qh = w32(b, W_QH);
  for (uint j = 0; j < 4; ++j) {
    const uint q = w32(b, W_QH + 4 + 4 * j);
    lw[j] = (q & 0x0f0f0f0fu) | fifth_bits(qh >> (4 * j));
    lw[4 + j] = ((q >> 4) & 0x0f0f0f0fu) | fifth_bits(qh >> (16 + 4 * j));
  }
#endif
#elif W_GROUPED
  // The codes as stored: 4-bit ones as they are, 8-bit ones (0..255) moved to -128..127.
  U16Row b = U16Row(row + uint64_t(u / (W_GROUP / 32)) * W_BB);
  wu.d = h16(b, 0);
  wu.m = h16(b, 2);
  const uint e0 = 32 * (u % (W_GROUP / 32));
#if W_BITS == 8
  zero = -128;
  for (uint j = 0; j < 8; ++j) lw[j] = w32(b, 4 + e0 + 4 * j) ^ 0x80808080u;
#elif W_GROUP == 32
  zero = 0;
  for (uint j = 0; j < 4; ++j) {
    const uint q = w32(b, 4 + 4 * j);
    lw[j] = q & 0x0f0f0f0fu;
    lw[4 + j] = (q >> 4) & 0x0f0f0f0fu;
  }
#else
  zero = 0;
  const uint first = 4 + e0 % (W_GROUP / 2), shift = e0 < W_GROUP / 2 ? 0u : 4u;
  for (uint j = 0; j < 8; ++j) lw[j] = (w32(b, first + 4 * j) >> shift) & 0x0f0f0f0fu;
#endif
#else
  wunit(row, u, wu);
  zero = 0;
  for (uint j = 0; j < 8; ++j)
    lw[j] = uint(wu.lv[4 * j] & 0xff) | (uint(wu.lv[4 * j + 1] & 0xff) << 8) |
            (uint(wu.lv[4 * j + 2] & 0xff) << 16) | (uint(wu.lv[4 * j + 3] & 0xff) << 24);
#endif
}
#endif

/// Unit u of the weight row at w against column a's converted activations (k per column).
float qdot(uint64_t w, uint u, uint64_t a, uint k) {
  WUnit wu;
  QRow q = QRow(a + 32 * uint64_t(u));
  int s[2] = int[2](0, 0), qs[2] = int[2](0, 0);  // per 16 elements: sum lv * q, sum q
#if INT_DOT
  uint lw[8];
  int zero;
  wunit_packed(w, u, wu, lw, zero);
  for (uint p = 0; p < 2; ++p) {
    for (uint j = 0; j < 4; ++j) {
      const int qw = int(q.v[4 * p + j]);
      s[p] += sdot4(int(lw[4 * p + j]), qw, 0);
      qs[p] += sdot4(0x01010101, qw, 0);
    }
    s[p] -= zero * qs[p];
  }
#else
  wunit(w, u, wu);
  for (uint p = 0; p < 2; ++p)
    for (uint w4 = 0; w4 < 4; ++w4) {
      const uint qw = q.v[4 * p + w4];
      for (uint i = 0; i < 4; ++i) {
        const int qa = sbyte_of(qw, i);
        s[p] += wu.lv[16 * p + 4 * w4 + i] * qa;
        qs[p] += qa;
      }
    }
#endif
#if W_GROUPED
  // dot_grouped's terms for one block: d * (da * sum(q * y)) - d * z * (da * sum(y)).
  const float da = F32Row(a + k).v[u];
  precise const float r = wu.d * (da * float(s[0] + s[1])) - wu.d * wu.m * (da * float(qs[0] + qs[1]));
#elif ACT == ACT_Q8_0
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
