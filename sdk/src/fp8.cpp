// float8_e4m3fn written from its definition (OCP 8-bit floating point, E4M3): the value of
// a code is (-1)^s 2^(e-7) (1 + m/8) for exponent field e in 1..15, (-1)^s 2^-6 (m/8) for
// e = 0; e = 15 with m = 7 is NaN, there are no infinities. Only exact float operations
// (scaling by powers of two, floor, subtraction of nearby values) are used, so the result
// does not depend on the compiler, the CPU or the rounding mode.
#include <cmath>
#include <cstring>

#include "switchyard/quant.hpp"

namespace sy {
namespace {
constexpr float kMax = 448.0f;
}  // namespace

float fp8_e4m3_decode(uint8_t code) noexcept {
  const bool neg = (code & 0x80) != 0;
  const int e = (code >> 3) & 0xf, m = code & 0x7;
  if (e == 15 && m == 7) return neg ? -NAN : NAN;
  const float mag = e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(static_cast<float>(8 + m), e - 10);
  return neg ? -mag : mag;
}

uint8_t fp8_e4m3_encode(float x) noexcept {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x)) return static_cast<uint8_t>(sign | 0x7f);
  const float a = std::fabs(x);
  if (a >= kMax) return static_cast<uint8_t>(sign | 0x7e);  // saturate (infinities too)
  // The step of the grid around a: 2^-9 among the subnormals (a < 2^-6), else 2^(E - 3)
  // in the binade [2^E, 2^(E+1)). q = a / step is exact (a power-of-two scaling).
  int exp2 = 0;
  std::frexp(a, &exp2);  // a = f 2^exp2, f in [0.5, 1): E = exp2 - 1
  const int E = a < 0x1p-6f ? -6 : exp2 - 1;
  const float q = std::ldexp(a, 3 - E);  // in [0, 8) for subnormals, [8, 16) for normals
  float n = std::floor(q);
  const float frac = q - n;  // exact: q and n share the binade
  if (frac > 0.5f || (frac == 0.5f && std::fmod(n, 2.0f) != 0.0f)) n += 1.0f;
  int mant = static_cast<int>(n);  // 0..16
  int e = a < 0x1p-6f ? 0 : E + 7;
  if (e == 0) return static_cast<uint8_t>(sign | mant);  // 8 is 2^-6, the smallest normal: code 0x08
  if (mant == 16) mant = 8, ++e;  // rounded up into the next binade
  // a < 448 rounds to at most 448 (e 15, m 6): never the NaN code.
  return static_cast<uint8_t>(sign | (e << 3) | (mant - 8));
}

float fp8_e4m3_qdq(float x, float s) noexcept {
  const float v = x / s;
  const float c = std::isnan(v) ? v : std::fmin(std::fmax(v, -kMax), kMax);
  return fp8_e4m3_decode(fp8_e4m3_encode(c)) * s;
}

}  // namespace sy
