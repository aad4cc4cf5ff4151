// Scalar references for the grouped integer types (I4_G*, I8_G*) and the FP8 block types
// (FP8_*_B128); every SIMD kernel of these types is tested against them.
//
// Grouped integers against Q8_0 activations with group sums (act_q8_0_gsums): a group of G
// weights (q - z) * d and its G/32 activation blocks y_b * dx_b give
//   d * sum_b dx_b * sum(q * y_b)  -  d * z * sum_b dx_b * sum(y_b),
// exact integer sums inside each block, the second sum read from the activation row (it is
// the same for every weight row). z is any f16 value; the checkpoints' zero points are
// small integers, but nothing here relies on it.
//
// FP8 blocks against f32 activations: each weight is decode(code) * s rounded to f32, which
// is exactly the reference dequantization's value, then multiplied and summed in f32.
#include <cmath>
#include <cstring>
#include <limits>

#include "act_q8_sums.hpp"
#include "dot.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {
namespace {

using u8 = uint8_t;

float h2f(const u8* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return fp16_to_fp32(v);
}

template <int G, int Bits>
float dot_grouped(int64_t n, const void* w, const void* a) {
  constexpr int kBytes = 4 + G * Bits / 8;
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  const u8* gsum = ab + q8g::group_sums_offset(n, G);
  const u8* scales = ab + q8g::scales_offset(n);
  const auto* y = reinterpret_cast<const int8_t*>(ab);
  float s = 0;
  for (int64_t g = 0; g < n / G; ++g, wb += kBytes, y += G) {
    const float d = h2f(wb), z = h2f(wb + 2);
    const u8* q = wb + 4;
    float part = 0;  // sum_b dx_b * sum(q * y_b)
    for (int b = 0; b < G / 32; ++b) {
      int sum = 0;
      for (int j = 0; j < 32; ++j) {
        const int e = 32 * b + j;  // element of the group
        int lv;
        if constexpr (Bits == 8)
          lv = q[e];
        else
          lv = e < G / 2 ? q[e] & 0xf : q[e - G / 2] >> 4;
        sum += lv * y[e];
      }
      part += ld_f32(scales + 32 * (g * (G / 32) + b)) * static_cast<float>(sum);
    }
    s += d * part - d * z * ld_f32(gsum + 4 * g);
  }
  return s;
}

// FP8 codes to f32 through half precision: an E5M2 code is the top byte of the f16 with
// the same value; an E4M3 code's exponent and mantissa, placed one bit lower in an f16,
// give the value / 256 (normal and subnormal alike), and S.1111.111 is NaN.
float e4m3(uint8_t c) {
  if ((c & 0x7f) == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  const auto h = static_cast<uint16_t>((c & 0x80) << 8 | (c & 0x7f) << 7);
  return fp16_to_fp32(h) * 256.0f;
}
float e5m2(uint8_t c) { return fp16_to_fp32(static_cast<uint16_t>(c << 8)); }

template <bool E5M2>
float dot_fp8(int64_t n, const void* w, const void* a) {
  static const auto table = [] {
    struct T {
      float v[256];
    } t;
    for (int c = 0; c < 256; ++c) t.v[c] = E5M2 ? e5m2(static_cast<uint8_t>(c)) : e4m3(static_cast<uint8_t>(c));
    return t;
  }();
  const auto* wb = static_cast<const u8*>(w);
  const auto* x = static_cast<const float*>(a);
  float s = 0;
  for (int64_t b = 0; b < n / 128; ++b, wb += 132, x += 128) {
    const float scale = ld_f32(wb);
    for (int j = 0; j < 128; ++j) {
      const float v = table.v[wb[4 + j]] * scale;  // the reference dequantization's value
      s += v * x[j];
    }
  }
  return s;
}

}  // namespace

DotKernel dot_kernel_scalar_grouped(StorageType w) {
  using T = StorageType;
  const auto gi = [](DotFn f) {
    DotKernel k{T::Q8_0, f, act_q8_0_gsums, Isa::scalar};
    k.act_bytes = act_q8_0_gsums_bytes;
    return k;
  };
  switch (w) {
    case T::I4_G32: return gi(dot_grouped<32, 4>);
    case T::I4_G64: return gi(dot_grouped<64, 4>);
    case T::I4_G128: return gi(dot_grouped<128, 4>);
    case T::I8_G32: return gi(dot_grouped<32, 8>);
    case T::I8_G64: return gi(dot_grouped<64, 8>);
    case T::I8_G128: return gi(dot_grouped<128, 8>);
    case T::FP8_E4M3_B128: return {T::F32, dot_fp8<false>, act_f32, Isa::scalar};
    case T::FP8_E5M2_B128: return {T::F32, dot_fp8<true>, act_f32, Isa::scalar};
    default: return {};
  }
}

}  // namespace sy::cpu
