// Shared pieces of the reference quantizers (not part of the SDK's public headers).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "switchyard/quant.hpp"

namespace sy::quant {

using u8 = uint8_t;

/// Round half to even, as every quantizer in the GGUF ecosystem does.
inline int nearest(float x) { return static_cast<int>(std::lrintf(x)); }
inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
/// The value a float has after a round trip through f16 (what is stored).
inline float f16r(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }
inline void put16(u8* p, uint16_t v) { std::memcpy(p, &v, 2); }

/// The weight of value i in a block's squared error: w[i] (importance weights,
/// quantize_row_weighted), or 1 when w is null. Every search below minimises
/// sum_i wt(w, i) * (x_i - value_i)^2, so a null w is the plain squared error bit for bit.
inline double wt(const float* w, int i) { return w ? static_cast<double>(w[i]) : 1.0; }

/// Best symmetric scale for n values on integer levels [lo, hi] (x ~ d*q): tries the
/// reference choice (d = max / lo, max being the value of largest magnitude) and a grid
/// around it, each refit by (weighted) least squares and evaluated with d rounded to f16.
/// Writes the chosen levels to q and returns d (already f16-exact).
float best_symmetric(const float* x, const float* w, int n, int lo, int hi, int8_t* q);

/// Best affine scale and offset for n values on levels [0, nmax] (x ~ d*q + m), with the
/// same candidate scheme. Returns d and m (f16-exact) and levels in q.
void best_affine(const float* x, const float* w, int n, int nmax, uint8_t* q, float& d, float& m);

/// Block quantizers of quantize.cpp's table, one block of the type each; `w` (nullable)
/// weighs each value's squared error. Q8_1 and Q8_K are activation types: they ignore it.
void q4_0(const float* x, const float* w, u8* b);
void q4_1(const float* x, const float* w, u8* b);
void q5_0(const float* x, const float* w, u8* b);
void q5_1(const float* x, const float* w, u8* b);
void q8_0(const float* x, const float* w, u8* b);
void q8_1(const float* x, const float* w, u8* b);
void q2_k(const float* x, const float* w, u8* b);
void q3_k(const float* x, const float* w, u8* b);
void q4_k(const float* x, const float* w, u8* b);
void q5_k(const float* x, const float* w, u8* b);
void q6_k(const float* x, const float* w, u8* b);
void q8_k(const float* x, const float* w, u8* b);
void iq4_nl(const float* x, const float* w, u8* b);
void iq4_xs(const float* x, const float* w, u8* b);

}  // namespace sy::quant
