// float8_e4m3fn encode/decode (quant.hpp) against the format's definition, written here
// independently: a code's value from its bit fields in double, and encoding as "the finite
// code nearest to clamp(x, -448, 448), ties to the code with an even mantissa" by a search
// over all 254 finite codes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "switchyard/quant.hpp"

namespace {

bool is_nan_code(int c) { return (c & 0x7f) == 0x7f; }

// (-1)^s 2^(e-7) (1 + m/8), or (-1)^s 2^-6 (m/8) for e = 0.
double code_value(int c) {
  const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  const double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return s ? -v : v;
}

// The definition of round-to-nearest-even with saturation, by exhaustive search.
int reference_encode(float xf) {
  const double x = std::fmin(std::fmax(static_cast<double>(xf), -448.0), 448.0);
  int best = -1;
  double best_d = 0;
  for (int c = 0; c < 256; ++c) {
    if (is_nan_code(c)) continue;
    if ((c & 0x80) != (std::signbit(xf) ? 0x80 : 0)) continue;  // the sign is kept (-0 included)
    const double d = std::abs(code_value(c) - x);
    if (best < 0 || d < best_d || (d == best_d && (c & 1) == 0)) best = c, best_d = d;
  }
  return best;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

TEST_CASE("fp8 e4m3: decode is exact for all 256 codes, 0x7F and 0xFF are NaN", "[quant][fp8]") {
  for (int c = 0; c < 256; ++c) {
    INFO("code " << c);
    const float v = sy::fp8_e4m3_decode(static_cast<uint8_t>(c));
    if (is_nan_code(c)) {
      CHECK(std::isnan(v));
      continue;
    }
    CHECK(static_cast<double>(v) == code_value(c));
    CHECK(std::signbit(v) == (c >= 128));  // 0x80 is -0
  }
  CHECK(sy::fp8_e4m3_decode(0x7e) == 448.0f);
  CHECK(sy::fp8_e4m3_decode(0x01) == std::ldexp(1.0f, -9));  // the smallest subnormal
  CHECK(sy::fp8_e4m3_decode(0x08) == std::ldexp(1.0f, -6));  // the smallest normal
}

TEST_CASE("fp8 e4m3: every code's value encodes to itself", "[quant][fp8]") {
  for (int c = 0; c < 256; ++c) {
    if (is_nan_code(c)) continue;
    INFO("code " << c);
    CHECK(sy::fp8_e4m3_encode(static_cast<float>(code_value(c))) == c);
  }
}

TEST_CASE("fp8 e4m3: ties to even, just past a midpoint rounds away, subnormals included", "[quant][fp8]") {
  for (int c = 0; c < 0x7e; ++c) {  // consecutive non-negative finite codes c, c + 1
    INFO("between codes " << c << " and " << c + 1);
    const double mid = (code_value(c) + code_value(c + 1)) / 2;  // exact in float: one more mantissa bit
    const auto midf = static_cast<float>(mid);
    REQUIRE(static_cast<double>(midf) == mid);
    const int even = (c & 1) == 0 ? c : c + 1;
    CHECK(sy::fp8_e4m3_encode(midf) == even);
    CHECK(sy::fp8_e4m3_encode(-midf) == (even | 0x80));
    CHECK(sy::fp8_e4m3_encode(std::nextafter(midf, 0.0f)) == c);
    CHECK(sy::fp8_e4m3_encode(std::nextafter(midf, 1e9f)) == c + 1);
  }
  // Half the smallest subnormal is a tie between 0 and 2^-9: to 0 (even).
  CHECK(sy::fp8_e4m3_encode(std::ldexp(1.0f, -10)) == 0x00);
  CHECK(sy::fp8_e4m3_encode(-std::ldexp(1.0f, -10)) == 0x80);
  CHECK(sy::fp8_e4m3_encode(std::ldexp(1.5f, -9)) == 0x02);  // 1.5 steps: tie, to 2 (even)
  // float subnormals and -0
  CHECK(sy::fp8_e4m3_encode(std::numeric_limits<float>::denorm_min()) == 0x00);
  CHECK(sy::fp8_e4m3_encode(-0.0f) == 0x80);
}

TEST_CASE("fp8 e4m3: saturates to +-448, infinities included; NaN stays NaN", "[quant][fp8]") {
  CHECK(sy::fp8_e4m3_encode(448.0f) == 0x7e);
  CHECK(sy::fp8_e4m3_encode(464.0f) == 0x7e);  // would tie with 480, which e4m3fn lacks (0x7F is NaN)
  CHECK(sy::fp8_e4m3_encode(500.0f) == 0x7e);
  CHECK(sy::fp8_e4m3_encode(1e30f) == 0x7e);
  CHECK(sy::fp8_e4m3_encode(-1e30f) == 0xfe);
  CHECK(sy::fp8_e4m3_encode(std::numeric_limits<float>::infinity()) == 0x7e);
  CHECK(sy::fp8_e4m3_encode(-std::numeric_limits<float>::infinity()) == 0xfe);
  // NaN: the NaN code of its sign (torch's float8_e4m3fn conversion keeps NaN too).
  CHECK(sy::fp8_e4m3_encode(std::numeric_limits<float>::quiet_NaN()) == 0x7f);
  CHECK(sy::fp8_e4m3_encode(-std::numeric_limits<float>::quiet_NaN()) == 0xff);
  CHECK(std::isnan(sy::fp8_e4m3_qdq(std::numeric_limits<float>::quiet_NaN(), 0.5f)));
  CHECK(sy::fp8_e4m3_qdq(std::numeric_limits<float>::infinity(), 0.5f) == 224.0f);
  CHECK(sy::fp8_e4m3_qdq(-1e6f, 0.25f) == -112.0f);
}

TEST_CASE("fp8 e4m3: encode matches the definition over a sweep of floats", "[quant][fp8]") {
  // Every 9973rd bit pattern of the positive floats below infinity, and their negatives: all
  // binades, float subnormals, the e4m3 subnormal range and the saturated range.
  for (uint32_t u = 0; u < 0x7f800000u; u += 9973) {
    const float x = bits_float(u);
    INFO("x = " << x);
    REQUIRE(sy::fp8_e4m3_encode(x) == reference_encode(x));
    REQUIRE(sy::fp8_e4m3_encode(-x) == reference_encode(-x));
  }
}

TEST_CASE("fp8 e4m3: qdq is decode(encode(clamp(x / s))) * s in float32", "[quant][fp8]") {
  const float scales[] = {0.0123f, 1.0f, 3.5e-3f, 7.0f};
  for (const float s : scales)
    for (uint32_t u = 0x30000000u; u < 0x45000000u; u += 4099) {  // 4.7e-10 .. 2048
      for (const float x : {bits_float(u), -bits_float(u)}) {
        INFO("x = " << x << ", s = " << s);
        const float want = static_cast<float>(code_value(reference_encode(x / s))) * s;
        REQUIRE(sy::fp8_e4m3_qdq(x, s) == want);
      }
    }
}
