// FP8 codes to and from f32, exact and independent of the device's float modes: codes are
// decoded by building the f32 bits (no f16 subnormals, no exp2), and the E4M3 encoder is
// a scalar port of sdk/src/fp8.cpp's fp8_e4m3_encode (powers of two built from bits, floor
// and a subtraction within one binade: each exact).
#ifndef SY_FP8_GLSL
#define SY_FP8_GLSL

/// float8_e4m3fn: bias 7, no infinities, S.1111.111 is NaN (a quiet NaN here, as the
/// runtime's reference table); subnormals m * 2^-9.
float e4m3_value(uint c) {
  const uint sign = (c & 0x80u) << 24;
  const uint e = (c >> 3) & 15u, m = c & 7u;
  if (e == 15u && m == 7u) return uintBitsToFloat(0x7fc00000u);
  if (e == 0u) return uintBitsToFloat(sign | floatBitsToUint(float(m) * 0.001953125));
  return uintBitsToFloat(sign | ((e + 120u) << 23) | (m << 20));
}

/// float8_e5m2: bias 15, infinities and NaNs; subnormals m * 2^-16.
float e5m2_value(uint c) {
  const uint sign = (c & 0x80u) << 24;
  const uint e = (c >> 2) & 31u, m = c & 3u;
  if (e == 31u) return m != 0u ? uintBitsToFloat(0x7fc00000u) : uintBitsToFloat(sign | 0x7f800000u);
  if (e == 0u) return uintBitsToFloat(sign | floatBitsToUint(float(m) * 0.0000152587890625));
  return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 21));
}

/// 2^n for -126 <= n <= 127, exactly.
float pow2(int n) { return uintBitsToFloat(uint(n + 127) << 23); }

/// f32 -> float8_e4m3fn code: nearest even, saturating at +-448 (infinities too), NaN to
/// S.1111.111 with x's sign.
uint e4m3_code(float x) {
  const uint sign = (floatBitsToUint(x) >> 24) & 0x80u;
  if (isnan(x)) return sign | 0x7fu;
  const float a = abs(x);
  if (a >= 448.0) return sign | 0x7eu;
  // The grid's step around a: 2^-9 among the subnormals (a < 2^-6), else 2^(E - 3) in the
  // binade [2^E, 2^(E+1)); q = a / step is exact (a power-of-two scaling).
  const bool sub = a < 0.015625;
  const int E = sub ? -6 : int(floatBitsToUint(a) >> 23) - 127;
  precise const float q = a * pow2(3 - E);  // [0, 8) for subnormals, [8, 16) for normals
  float n = floor(q);
  precise const float frac = q - n;  // exact: q and n share the binade
  if (frac > 0.5 || (frac == 0.5 && (int(n) & 1) != 0)) n += 1.0;
  int mant = int(n);  // 0..16
  int e = sub ? 0 : E + 7;
  if (e == 0) return sign | uint(mant);  // 8 is 2^-6, the smallest normal: code 0x08
  if (mant == 16) {
    mant = 8;  // rounded up into the next binade
    ++e;
  }
  // a < 448 rounds to at most 448 (e 15, m 6): never the NaN code.
  return sign | uint(e << 3) | uint(mant - 8);
}

#endif
