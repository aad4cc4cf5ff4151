// Reference dequantization of Switchyard's own weight types: the in-row layouts that
// format plugins repack AWQ, GPTQ and FP8 checkpoints into. Each product is the one
// multiply the checkpoints' definitions use ((q - z) * s, decode(code) * s), so results are
// bit-identical to those definitions; built without floating-point contraction.
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/grouped.hpp"
#include "switchyard/quant.hpp"

namespace sy::ref {
namespace {

uint16_t rd16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// float8_e4m3fn: bias 7, subnormals, no infinities, S.1111.111 is NaN, max 448.
float e4m3(uint8_t c) {
  const int exp = (c >> 3) & 0xf, man = c & 7;
  const float sign = (c & 0x80) ? -1.0f : 1.0f;
  if (exp == 0xf && man == 7) return std::numeric_limits<float>::quiet_NaN();
  if (exp == 0) return sign * static_cast<float>(man) * 0x1p-9f;  // 2^-6 * man / 8
  return sign * (1.0f + static_cast<float>(man) / 8.0f) * std::ldexp(1.0f, exp - 7);
}

// float8_e5m2: IEEE-like, bias 15, infinities and NaNs.
float e5m2(uint8_t c) {
  const int exp = (c >> 2) & 0x1f, man = c & 3;
  const float sign = (c & 0x80) ? -1.0f : 1.0f;
  if (exp == 0x1f) return man ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (exp == 0) return sign * static_cast<float>(man) * 0x1p-16f;  // 2^-14 * man / 4
  return sign * (1.0f + static_cast<float>(man) / 4.0f) * std::ldexp(1.0f, exp - 15);
}

template <float (*Decode)(uint8_t)>
std::array<float, 256> table() {
  std::array<float, 256> t{};
  for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = Decode(static_cast<uint8_t>(i));
  return t;
}
float e4m3_fn(uint8_t c) { return e4m3(c); }

}  // namespace

float fp8_e4m3_to_fp32(uint8_t code) noexcept {
  static const auto t = table<e4m3_fn>();
  return t[code];
}

float fp8_e5m2_to_fp32(uint8_t code) noexcept {
  static const auto t = table<e5m2>();
  return t[code];
}

void dequant_int_group(const uint8_t* b, float* y, int group, int bits) noexcept {
  const float d = fp16_to_fp32(rd16(b)), z = fp16_to_fp32(rd16(b + 2));
  const uint8_t* q = b + 4;
  if (bits == 8) {
    for (int j = 0; j < group; ++j) y[j] = (static_cast<float>(q[j]) - z) * d;
    return;
  }
  const int half = group / 2;
  for (int j = 0; j < half; ++j) {
    y[j] = (static_cast<float>(q[j] & 0xf) - z) * d;
    y[j + half] = (static_cast<float>(q[j] >> 4) - z) * d;
  }
}

void dequant_fp8_block(const uint8_t* b, float* y, bool e5m2_codes) noexcept {
  float s;
  std::memcpy(&s, b, 4);
  const uint8_t* c = b + 4;
  for (int j = 0; j < 128; ++j) y[j] = (e5m2_codes ? fp8_e5m2_to_fp32(c[j]) : fp8_e4m3_to_fp32(c[j])) * s;
}

}  // namespace sy::ref
