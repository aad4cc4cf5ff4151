#version 450
// matmul's prep stage: converts the activations X (source 1, f32 [k, columns...] in any
// strides) into the weight type's dot type in the node's scratch (act_layout.glsl, -DACT),
// exactly as the CPU backend does before its dot products (backends/cpu/kernels/
// dot_scalar.cpp: act_q8_0, act_bf16; act_q8_k is the SDK's Q8_K quantize_row), so both
// dot the same integers. One invocation per block (per element for BF16); the flat index
// folds over groups.x and groups.y.
//
// Division and f16 rounding are done exactly (set_rows_exact.glsl); products are `precise`.
#include "common.glsl"
#include "set_rows_exact.glsl"
#include "act_layout.glsl"

#define WG 64
layout(local_size_x = WG) in;

#if ACT == ACT_Q8_0
#define ITEM 32
#elif ACT == ACT_Q8_K
#define ITEM 256
#elif ACT == ACT_BF16
#define ITEM 1
#else
#error "ACT must be ACT_Q8_0, ACT_Q8_K or ACT_BF16"
#endif

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer XRow { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer OutF32 { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer OutU32 { uint v[]; };

void main() {
  const uint k = uint(ne(SRC1, 0));
  const int n1 = ne(SRC1, 1), n2 = ne(SRC1, 2);
  const uint per_col = k / ITEM, cols = uint(n1 * n2 * ne(SRC1, 3));
  const uint item = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG + gl_LocalInvocationID.x;
  if (item >= per_col * cols) return;
  const uint c = item / per_col, b = item % per_col;
  const int ci = int(c);
  XRow x = XRow(row(SRC1, ci % n1, (ci / n1) % n2, ci / (n1 * n2)) + uint64_t(4 * ITEM * b));
  const uint64_t col = act_col(c, k);
#if ACT == ACT_BF16
  // fp32_to_bf16: nearest even; a NaN stays a (quiet) NaN.
  const uint u = floatBitsToUint(x.v[0]);
  const uint h = (u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  OutF32(col).v[b] = uintBitsToFloat(h << 16);
#elif ACT == ACT_Q8_0
  // act_q8_0: d = amax / 127 (stored as f16), levels round(x / d) with id from the
  // unrounded d, half away from zero, saturated; NaN gives 0.
  float amax = 0.0;
  for (uint j = 0; j < 32; ++j) {
    const float a = abs(x.v[j]);
    if (a > amax) amax = a;
  }
  const float d = div_any(amax, 127.0);
  const float id = d != 0.0 ? div_any(1.0, d) : 0.0;
  OutF32(col + k).v[b] = f16_value(f16_bits(d));
  for (uint w = 0; w < 8; ++w) {
    uint packed = 0u;
    for (uint i = 0; i < 4; ++i) {
      precise const float v = x.v[4 * w + i] * id;
      precise const float t = trunc(v);
      // v - trunc(v) is exact; |v| >= 2^23 is already whole.
      precise const float r = abs(v - t) >= 0.5 ? t + sign(v) : t;
      const int q = isnan(v) ? 0 : r >= 127.0 ? 127 : r <= -128.0 ? -128 : int(r);
      packed |= (uint(q) & 255u) << (8 * i);
    }
    OutU32(col + 32 * b).v[w] = packed;
  }
#else
  // The SDK's Q8_K quantize_row: the value of largest magnitude (first of equals) sets
  // iscale = -127 / max, levels nearest-even of iscale * x capped at 127, d = 1 / iscale.
  // A level the CPU's lrintf cannot represent (NaN, infinity) comes out 0 there too.
  float amax = 0.0, mx = 0.0;
  for (uint j = 0; j < 256; ++j) {
    const float a = abs(x.v[j]);
    if (a > amax) {
      amax = a;
      mx = x.v[j];
    }
  }
  float d = 0.0, iscale = 0.0;
  if (amax > 0.0) {
    iscale = div_any(-127.0, mx);
    d = div_any(1.0, iscale);
  }
  OutF32(col + k).v[b] = d;
  for (uint w = 0; w < 64; ++w) {
    uint packed = 0u;
    if (amax > 0.0)
      for (uint i = 0; i < 4; ++i) {
        precise const float v = iscale * x.v[4 * w + i];
        const int q = abs(v) < 2147483648.0 ? min(127, int(roundEven(v))) : 0;
        packed |= (uint(q) & 255u) << (8 * i);
      }
    OutU32(col + 256 * b).v[w] = packed;
  }
#endif
}
