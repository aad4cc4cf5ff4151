// Weight decoding for one storage type, chosen at compile time by -DWTYPE=<storage id>.
// Every type is read in units of 32 consecutive elements (a whole block of the 32-element
// formats, one sub-block of the 256-element K-quants and IQ4_XS), so a kernel streams a row
// unit by unit and decodes each unit once for however many activation columns it serves.
//
//   W_PLAIN          1 for F32/F16/BF16 (any row length: units cover k / 32, dq1 the rest)
//   W_FP8            1 for FP8_E4M3_B128 / FP8_E5M2_B128 (decoded to floats, no WUnit)
//   W_FLOAT          W_PLAIN || W_FP8: matmul dots dq32's floats with f32 activations
//   W_GROUPED        1 for I4_G* / I8_G* (WUnit's m is the group's zero point z)
//   dq32(row, u, v)  elements 32u .. 32u + 31 of the row starting at byte address `row`
//   dq1(row, i)      element i of a plain-type row
//   wunit(row, u, w) quantized types: unit u's integer levels and scales (WUnit), the
//                    terms of the CPU's integer dot products (qdot.glsl uses them)
//
// Values follow sdk/src/dequant.cpp and runtime/types/reference/dequant_grouped.cpp exactly
// (same products in the same order). Block sizes are all even but not all multiples of 4,
// and a row of a 2-byte type may start at any even address, so everything is read in
// 16-bit pieces (w32 joins two) and never assumes more than 2-byte alignment. Requires
// common.glsl.

#ifndef WTYPE
#error "define WTYPE (a storage type id)"
#endif

// Storage ids for preprocessor tests (common.glsl's T_* carry a 'u' suffix, which #if
// does not accept).
#define WT_F32 0
#define WT_F16 1
#define WT_Q4_0 2
#define WT_Q4_1 3
#define WT_Q5_0 6
#define WT_Q5_1 7
#define WT_Q8_0 8
#define WT_Q2_K 10
#define WT_Q3_K 11
#define WT_Q4_K 12
#define WT_Q5_K 13
#define WT_Q6_K 14
#define WT_IQ4_NL 20
#define WT_IQ4_XS 23
#define WT_BF16 30
#define WT_FP8_E4M3_B128 1002
#define WT_FP8_E5M2_B128 1003
#define WT_I4_G32 1010
#define WT_I4_G64 1011
#define WT_I4_G128 1012
#define WT_I8_G32 1020
#define WT_I8_G64 1021
#define WT_I8_G128 1022

// A row or block seen as an array: one 64-bit base, 32-bit offsets (cheaper than forming
// a 64-bit address per load).
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer U16Row { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer F32Row { float v[]; };

/// The 16-bit, 32-bit (two halves) and 8-bit value at even / even / any byte offset o of p.
uint w16(U16Row p, uint o) { return uint(p.v[o / 2]); }
uint w32(U16Row p, uint o) { return uint(p.v[o / 2]) | (uint(p.v[o / 2 + 1]) << 16); }
uint w8(U16Row p, uint o) { return bitfieldExtract(uint(p.v[o / 2]), int(8 * (o % 2)), 8); }
float h16(U16Row p, uint o) { return unpackHalf2x16(w16(p, o)).x; }
/// Byte i (0..3) of a word, sign-extended.
int sbyte_of(uint w, uint i) { return bitfieldExtract(int(w), int(8 * i), 8); }

#if WTYPE == WT_F32 || WTYPE == WT_F16 || WTYPE == WT_BF16
#define W_PLAIN 1
#else
#define W_PLAIN 0
#endif
#if WTYPE == WT_FP8_E4M3_B128 || WTYPE == WT_FP8_E5M2_B128
#define W_FP8 1
#else
#define W_FP8 0
#endif
#define W_FLOAT (W_PLAIN || W_FP8)
// Grouped integers: W_GROUP elements per group, W_BITS per code.
#if WTYPE >= WT_I4_G32 && WTYPE <= WT_I4_G128
#define W_GROUPED 1
#define W_BITS 4
#define W_GROUP (32 << (WTYPE - WT_I4_G32))
#elif WTYPE >= WT_I8_G32 && WTYPE <= WT_I8_G128
#define W_GROUPED 1
#define W_BITS 8
#define W_GROUP (32 << (WTYPE - WT_I8_G32))
#else
#define W_GROUPED 0
#endif


#if W_PLAIN

// Elements of a plain type by index (row is the element type's alignment).
#if WTYPE == WT_F32
float dq1(uint64_t row, uint i) { return F32Row(row).v[i]; }
#elif WTYPE == WT_F16
float dq1(uint64_t row, uint i) { return unpackHalf2x16(uint(U16Row(row).v[i])).x; }
#else
float dq1(uint64_t row, uint i) { return uintBitsToFloat(uint(U16Row(row).v[i]) << 16); }
#endif

void dq32(uint64_t row, uint u, out float v[32]) {
#if WTYPE == WT_F32
  F32Row r = F32Row(row + 128 * uint64_t(u));
  for (uint i = 0; i < 32; ++i) v[i] = r.v[i];
#else
  U16Row r = U16Row(row + 64 * uint64_t(u));
  for (uint i = 0; i < 32; ++i) v[i] = WTYPE == WT_F16 ? unpackHalf2x16(uint(r.v[i])).x : uintBitsToFloat(uint(r.v[i]) << 16);
#endif
}

#elif W_FP8

// A block: f32 scale s, then 128 codes; x = decode(code) * s (fp8.glsl decodes exactly).
#include "fp8.glsl"
#if WTYPE == WT_FP8_E4M3_B128
#define fp8_value e4m3_value
#else
#define fp8_value e5m2_value
#endif

// Unit u is a quarter of block u / 4.
void dq32(uint64_t row, uint u, out float v[32]) {
  U16Row b = U16Row(row + uint64_t(u / 4) * 132);
  const float s = uintBitsToFloat(w32(b, 0));
  const uint q = 4 + 32 * (u % 4);
  for (uint w4 = 0; w4 < 8; ++w4) {
    const uint cw = w32(b, q + 4 * w4);
    for (uint k = 0; k < 4; ++k) {
      precise const float x = fp8_value(bitfieldExtract(cw, int(8 * k), 8)) * s;
      v[4 * w4 + k] = x;
    }
  }
}

#else

// Quantized types are decoded in two steps: wunit() reads a unit's integer levels and
// scales exactly as the CPU's scalar dot products see them (backends/cpu/kernels/
// dot_scalar.cpp), and dq32() (below) turns them into the SDK's dequantized values. The
// matmul shaders dot the levels with q8 activations in integers (qdot.glsl).
//
// 32-element types: value = d * lv (+ m for Q4_1 / Q5_1); sc = 1, mn = 0.
// Grouped integers (I4_G*, I8_G*): value = (lv - m) * d, m the group's zero point z.
// K-quants and IQ4_XS: value = (d * sc[p]) * lv - (m * mn[p]) for the unit's halves p of
// 16 elements (m is dmin; mn = 0 for the symmetric types), i.e. the CPU's 16-element groups.
struct WUnit {
  int lv[32];
  float d, m;
  int sc[2], mn[2];
};

#if WTYPE == WT_IQ4_NL || WTYPE == WT_IQ4_XS
// The 4-bit non-linear grid of IQ4_NL and IQ4_XS.
const int kIQ4[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
#endif

#if WTYPE == WT_Q4_0 || WTYPE == WT_Q4_1 || WTYPE == WT_IQ4_NL

// 16 bytes of nibble pairs: byte j holds element j (low) and j + 16 (high).
#if WTYPE == WT_Q4_1
#define W_BB 20
#define W_QS 4
#else
#define W_BB 18
#define W_QS 2
#endif
void wunit(uint64_t row, uint u, out WUnit w) {
  U16Row b = U16Row(row + uint64_t(u) * W_BB);
  w.d = h16(b, 0);
  w.m = WTYPE == WT_Q4_1 ? h16(b, 2) : 0.0;
  for (uint w4 = 0; w4 < 4; ++w4) {
    const uint q = w32(b, W_QS + 4 * w4);
    for (uint k = 0; k < 4; ++k) {
      const uint j = 4 * w4 + k, lo = bitfieldExtract(q, int(8 * k), 4), hi = bitfieldExtract(q, int(8 * k + 4), 4);
#if WTYPE == WT_Q4_0
      w.lv[j] = int(lo) - 8;
      w.lv[j + 16] = int(hi) - 8;
#elif WTYPE == WT_Q4_1
      w.lv[j] = int(lo);
      w.lv[j + 16] = int(hi);
#else
      w.lv[j] = kIQ4[lo];
      w.lv[j + 16] = kIQ4[hi];
#endif
    }
  }
}

#elif WTYPE == WT_Q5_0 || WTYPE == WT_Q5_1

// As Q4_0/Q4_1 plus a 32-bit word of fifth bits: bit j for element j.
#if WTYPE == WT_Q5_1
#define W_BB 24
#define W_QH 4
#else
#define W_BB 22
#define W_QH 2
#endif
void wunit(uint64_t row, uint u, out WUnit w) {
  U16Row b = U16Row(row + uint64_t(u) * W_BB);
  w.d = h16(b, 0);
  w.m = WTYPE == WT_Q5_1 ? h16(b, 2) : 0.0;
  const int off = WTYPE == WT_Q5_0 ? 16 : 0;
  const uint qh = w32(b, W_QH);
  for (uint w4 = 0; w4 < 4; ++w4) {
    const uint q = w32(b, W_QH + 4 + 4 * w4);
    for (uint k = 0; k < 4; ++k) {
      const uint j = 4 * w4 + k;
      const uint lo = bitfieldExtract(q, int(8 * k), 4) | (bitfieldExtract(qh, int(j), 1) << 4);
      const uint hi = bitfieldExtract(q, int(8 * k + 4), 4) | (bitfieldExtract(qh, int(j + 16), 1) << 4);
      w.lv[j] = int(lo) - off;
      w.lv[j + 16] = int(hi) - off;
    }
  }
}

#elif WTYPE == WT_Q8_0

void wunit(uint64_t row, uint u, out WUnit w) {
  U16Row b = U16Row(row + uint64_t(u) * 34);
  w.d = h16(b, 0);
  w.m = 0.0;
  for (uint w4 = 0; w4 < 8; ++w4) {
    const uint q = w32(b, 2 + 4 * w4);
    for (uint k = 0; k < 4; ++k) w.lv[4 * w4 + k] = sbyte_of(q, k);
  }
}

#elif WTYPE == WT_Q2_K || WTYPE == WT_Q3_K

// 256 elements in two halves of 128; half h's 32 quant bytes q[32h .. 32h+31] hold four
// 2-bit planes. Unit s (0..7) is plane s % 4 of half s / 4: element l + 16p of the unit
// (p = 0, 1) is q[32h + 16p + l] >> 2(s % 4), with scale 2s + p. Q3_K adds a third bit
// (hmask byte 16p + l, bit s; a clear bit subtracts 4).
void wunit(uint64_t row, uint u, out WUnit w) {
  const uint s = u % 8;
  const uint shift = 2 * (s % 4);
#if WTYPE == WT_Q2_K
  U16Row b = U16Row(row + uint64_t(u / 8) * 84);
  const uint q = 16 + 32 * (s / 4);
  w.d = h16(b, 80);
  w.m = h16(b, 82);
  const uint scw = w16(b, 2 * s);  // scales 2s and 2s + 1
#else
  U16Row b = U16Row(row + uint64_t(u / 8) * 110);
  const uint q = 32 + 32 * (s / 4);
  w.d = h16(b, 108);
  w.m = 0.0;
#endif
  for (uint p = 0; p < 2; ++p) {
#if WTYPE == WT_Q2_K
    const uint sc = bitfieldExtract(scw, int(8 * p), 8);
    w.sc[p] = int(sc & 15u);
    w.mn[p] = int(sc >> 4);
#else
    // 16 six-bit scales: low 4 bits in bytes 0..7 (two per byte), high 2 bits in bytes 8..11.
    const uint i = 2 * s + p;
    const uint low = bitfieldExtract(w8(b, 96 + (i % 8)), int(4 * (i / 8)), 4);
    const uint high = bitfieldExtract(w8(b, 104 + (i % 4)), int(2 * (i / 4)), 2);
    w.sc[p] = int(low | (high << 4)) - 32;
    w.mn[p] = 0;
#endif
    for (uint w4 = 0; w4 < 4; ++w4) {
      const uint qw = w32(b, q + 16 * p + 4 * w4);
#if WTYPE == WT_Q3_K
      const uint hw = w32(b, 16 * p + 4 * w4);
#endif
      for (uint k = 0; k < 4; ++k) {
        const uint l = 4 * w4 + k;
        const int x = int(bitfieldExtract(qw, int(8 * k + shift), 2));
#if WTYPE == WT_Q2_K
        w.lv[16 * p + l] = x;
#else
        w.lv[16 * p + l] = x - (bitfieldExtract(hw, int(8 * k + s), 1) != 0u ? 0 : 4);
#endif
      }
    }
  }
}

#elif WTYPE == WT_Q4_K || WTYPE == WT_Q5_K

// Eight units of 32; unit j's quants are the low (j even) or high (j odd) nibbles of bytes
// 32(j / 2) .. +31, with the 6-bit (scale, min) pair j of the 12 packed scale bytes. Q5_K
// adds bit j of qh[l] as 16.
#if WTYPE == WT_Q4_K
#define W_BB 144
#define W_QS 16
#else
#define W_BB 176
#define W_QS 48
#endif
void wunit(uint64_t row, uint u, out WUnit w) {
  const uint j = u % 8;
  U16Row b = U16Row(row + uint64_t(u / 8) * W_BB);
  w.d = h16(b, 0);
  w.m = h16(b, 2);
  uint sc, mn;
  if (j < 4) {
    sc = w8(b, 4 + j) & 63u;
    mn = w8(b, 8 + j) & 63u;
  } else {
    const uint e = w8(b, 8 + j);  // bytes 12..15 of the scales
    sc = (e & 15u) | ((w8(b, j) >> 6) << 4);
    mn = (e >> 4) | ((w8(b, 4 + j) >> 6) << 4);
  }
  w.sc[0] = w.sc[1] = int(sc);
  w.mn[0] = w.mn[1] = int(mn);
  const uint q = W_QS + 32 * (j / 2);
  for (uint w4 = 0; w4 < 8; ++w4) {
    const uint qw = w32(b, q + 4 * w4);
#if WTYPE == WT_Q5_K
    const uint hw = w32(b, 16 + 4 * w4);
#endif
    for (uint k = 0; k < 4; ++k) {
      uint x = bitfieldExtract(qw, int(8 * k + 4 * (j % 2)), 4);
#if WTYPE == WT_Q5_K
      x |= bitfieldExtract(hw, int(8 * k + j), 1) << 4;
#endif
      w.lv[4 * w4 + k] = int(x);
    }
  }
}

#elif WTYPE == WT_Q6_K

// Two halves of 128; unit j is quarter j % 4 of half j / 4. Quarter t takes the low
// (t < 2) or high nibbles of ql[64h + 32(t % 2) + l] and bits 2t, 2t+1 of qh[32h + l];
// element l's scale is sc[8h + 2t + l / 16].
void wunit(uint64_t row, uint u, out WUnit w) {
  const uint j = u % 8, h = j / 4, t = j % 4;
  U16Row b = U16Row(row + uint64_t(u / 8) * 210);
  w.d = h16(b, 208);
  w.m = 0.0;
  const uint scw = w16(b, 192 + 8 * h + 2 * t);
  w.sc[0] = sbyte_of(scw, 0);
  w.sc[1] = sbyte_of(scw, 1);
  w.mn[0] = w.mn[1] = 0;
  const uint ql = 64 * h + 32 * (t % 2), qh = 128 + 32 * h;
  for (uint w4 = 0; w4 < 8; ++w4) {
    const uint lw = w32(b, ql + 4 * w4), hw = w32(b, qh + 4 * w4);
    for (uint k = 0; k < 4; ++k) {
      const uint x = bitfieldExtract(lw, int(8 * k + 4 * (t / 2)), 4) | (bitfieldExtract(hw, int(8 * k + 2 * t), 2) << 4);
      w.lv[4 * w4 + k] = int(x) - 32;
    }
  }
}

#elif WTYPE == WT_IQ4_XS

// Eight units of 32 like IQ4_NL blocks, each with a 6-bit scale (low 4 bits in
// scales_l, high 2 in scales_h) and the super-block's f16 d.
void wunit(uint64_t row, uint u, out WUnit w) {
  const uint ib = u % 8;
  U16Row b = U16Row(row + uint64_t(u / 8) * 136);
  w.d = h16(b, 0);
  w.m = 0.0;
  const uint ls = bitfieldExtract(w8(b, 4 + ib / 2), int(4 * (ib % 2)), 4) |
                  (bitfieldExtract(w16(b, 2), int(2 * ib), 2) << 4);
  w.sc[0] = w.sc[1] = int(ls) - 32;
  w.mn[0] = w.mn[1] = 0;
  const uint q = 8 + 16 * ib;
  for (uint w4 = 0; w4 < 4; ++w4) {
    const uint qw = w32(b, q + 4 * w4);
    for (uint k = 0; k < 4; ++k) {
      const uint j = 4 * w4 + k;
      w.lv[j] = kIQ4[bitfieldExtract(qw, int(8 * k), 4)];
      w.lv[j + 16] = kIQ4[bitfieldExtract(qw, int(8 * k + 4), 4)];
    }
  }
}

#elif W_GROUPED

// Group u / (W_GROUP / 32) holds f16 d, f16 z, then the codes: 8-bit ones a byte each;
// 4-bit ones with byte j holding element j (low nibble) and j + W_GROUP / 2 (high), so a
// unit of a larger group is the low or the high nibbles of 32 consecutive bytes, and a
// 32-element group is laid out as Q4_1. lv are the codes as stored (0..15, 0..255); m is z.
#define W_BB (4 + W_GROUP * W_BITS / 8)
void wunit(uint64_t row, uint u, out WUnit w) {
  const uint per = W_GROUP / 32, e0 = 32 * (u % per);
  U16Row b = U16Row(row + uint64_t(u / per) * W_BB);
  w.d = h16(b, 0);
  w.m = h16(b, 2);
#if W_BITS == 8
  for (uint w4 = 0; w4 < 8; ++w4) {
    const uint q = w32(b, 4 + e0 + 4 * w4);
    for (uint k = 0; k < 4; ++k) w.lv[4 * w4 + k] = int(bitfieldExtract(q, int(8 * k), 8));
  }
#elif W_GROUP == 32
  for (uint w4 = 0; w4 < 4; ++w4) {
    const uint q = w32(b, 4 + 4 * w4);
    for (uint k = 0; k < 4; ++k) {
      w.lv[4 * w4 + k] = int(bitfieldExtract(q, int(8 * k), 4));
      w.lv[4 * w4 + k + 16] = int(bitfieldExtract(q, int(8 * k + 4), 4));
    }
  }
#else
  const uint first = 4 + e0 % (W_GROUP / 2), shift = e0 < W_GROUP / 2 ? 0u : 4u;
  for (uint w4 = 0; w4 < 8; ++w4) {
    const uint q = w32(b, first + 4 * w4);
    for (uint k = 0; k < 4; ++k) w.lv[4 * w4 + k] = int(bitfieldExtract(q, int(8 * k + shift), 4));
  }
#endif
}

#else
#error "WTYPE is not a weight type this file decodes"
#endif

#if WTYPE == WT_Q2_K || WTYPE == WT_Q3_K || WTYPE == WT_Q4_K || WTYPE == WT_Q5_K || WTYPE == WT_Q6_K || \
    WTYPE == WT_IQ4_XS
#define W_KQUANT 1
#else
#define W_KQUANT 0
#endif
// Types whose values carry an offset (m) besides d * level.
#if WTYPE == WT_Q4_1 || WTYPE == WT_Q5_1 || WTYPE == WT_Q2_K || WTYPE == WT_Q4_K || WTYPE == WT_Q5_K
#define W_AFFINE 1
#else
#define W_AFFINE 0
#endif

// The SDK's dequantized values (sdk/src/dequant.cpp's products, in its order).
void dq32(uint64_t row, uint u, out float v[32]) {
  WUnit w;
  wunit(row, u, w);
#if W_KQUANT
  for (uint p = 0; p < 2; ++p) {
    const float dl = w.d * float(w.sc[p]);
#if W_AFFINE
    const float ml = w.m * float(w.mn[p]);
    for (uint l = 0; l < 16; ++l) v[16 * p + l] = dl * float(w.lv[16 * p + l]) - ml;
#else
    for (uint l = 0; l < 16; ++l) v[16 * p + l] = dl * float(w.lv[16 * p + l]);
#endif
  }
#elif W_GROUPED
  // dequant_int_group: (q - z) * d.
  for (uint j = 0; j < 32; ++j) {
    precise const float x = (float(w.lv[j]) - w.m) * w.d;
    v[j] = x;
  }
#else
  for (uint j = 0; j < 32; ++j) {
#if W_AFFINE
    v[j] = float(w.lv[j]) * w.d + w.m;
#elif WTYPE == WT_IQ4_NL
    v[j] = w.d * float(w.lv[j]);
#else
    v[j] = float(w.lv[j]) * w.d;
#endif
  }
#endif
}

#endif
