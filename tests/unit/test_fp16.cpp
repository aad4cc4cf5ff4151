// Half and bfloat16 conversions, checked exhaustively against double arithmetic.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "switchyard/quant.hpp"

namespace {
// Independent decode of a half: sign * 2^(e-15) * (1 + m/1024), or subnormal.
double half_value(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return s ? -v : v;
}
}  // namespace

TEST_CASE("fp16 -> fp32 is exact for every finite half", "[quant]") {
  for (uint32_t h = 0; h < 65536; ++h) {
    if (((h >> 10) & 31) == 31) continue;
    INFO(h);
    REQUIRE(static_cast<double>(sy::fp16_to_fp32(static_cast<uint16_t>(h))) == half_value(static_cast<uint16_t>(h)));
  }
  CHECK(std::isinf(sy::fp16_to_fp32(0x7c00)));
  CHECK(std::isnan(sy::fp16_to_fp32(0x7e00)));
}

TEST_CASE("fp32 -> fp16 rounds to nearest even", "[quant]") {
  for (uint32_t h = 0; h < 0x7c00; ++h) {  // every finite non-negative half
    const float f = sy::fp16_to_fp32(static_cast<uint16_t>(h));
    REQUIRE(sy::fp32_to_fp16(f) == h);    // exact values round-trip
    REQUIRE(sy::fp32_to_fp16(-f) == (h | 0x8000));
    if (h + 1 < 0x7c00) {
      // Midpoint between h and h+1: ties go to the even one; just above goes up.
      const double mid = (half_value(static_cast<uint16_t>(h)) + half_value(static_cast<uint16_t>(h + 1))) / 2;
      const auto tie = sy::fp32_to_fp16(static_cast<float>(mid));
      REQUIRE(tie == ((h & 1) ? h + 1 : h));
      const float above = std::nextafter(static_cast<float>(mid), 1e9f);
      REQUIRE(sy::fp32_to_fp16(above) == h + 1);
    }
  }
  CHECK(sy::fp32_to_fp16(65520.f) == 0x7c00);  // rounds past the largest half: infinity
  CHECK(sy::fp32_to_fp16(65519.f) == 0x7bff);
  CHECK(sy::fp32_to_fp16(1e-9f) == 0);
}

TEST_CASE("bf16 conversions", "[quant]") {
  CHECK(sy::bf16_to_fp32(0x3f80) == 1.0f);
  CHECK(sy::fp32_to_bf16(1.0f) == 0x3f80);
  // 1 + 2^-8 is exactly between two bf16 values: ties to even (1.0).
  CHECK(sy::fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);
  CHECK(sy::fp32_to_bf16(1.0f + std::ldexp(3.0f, -8)) == 0x3f82);
  CHECK(std::isnan(sy::bf16_to_fp32(sy::fp32_to_bf16(NAN))));
}
