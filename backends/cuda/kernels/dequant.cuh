// One element of a weight row, decoded on the device: the block layouts and products of the
// reference dequantization (runtime/types/reference/dequant.cpp, dequant_grouped.cpp), in the
// same order, so with -fmad=false each value is bit-identical to the CPU's. Per element, not
// per block: the portable matmul reads any element it needs; fast paths decode whole blocks.
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/blocks.hpp"
#include "kernels/types.hpp"

namespace sy::cuda {

// FP8 codes to f32, exactly (every E4M3 and E5M2 value is an f16). sm_89+ converts in
// hardware (cvt.f16x2.e4m3x2 / e5m2x2); older GPUs decode the bits as the SDK does.
__device__ inline float fp8_e4m3(uint8_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(c, __NV_E4M3)));
#else
  const int exp = (c >> 3) & 0xf, man = c & 7;
  const float sign = (c & 0x80) ? -1.0f : 1.0f;
  if (exp == 0xf && man == 7) return __int_as_float(0x7fc00000);
  if (exp == 0) return sign * static_cast<float>(man) * 0x1p-9f;
  return sign * (1.0f + static_cast<float>(man) / 8.0f) * ldexpf(1.0f, exp - 7);
#endif
}
__device__ inline float fp8_e5m2(uint8_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(c, __NV_E5M2)));
#else
  const int exp = (c >> 2) & 0x1f, man = c & 3;
  const float sign = (c & 0x80) ? -1.0f : 1.0f;
  if (exp == 0x1f) return man ? __int_as_float(0x7fc00000) : sign * __int_as_float(0x7f800000);
  if (exp == 0) return sign * static_cast<float>(man) * 0x1p-16f;
  return sign * (1.0f + static_cast<float>(man) / 4.0f) * ldexpf(1.0f, exp - 15);
#endif
}

/// Element i of a row of `type` starting at `row`.
__device__ inline float dequant(uint32_t type, const uint8_t* row, int64_t i) {
  switch (type) {
    case ty::F32: return reinterpret_cast<const float*>(row)[i];
    case ty::F16: return h2f(row + 2 * i);
    case ty::BF16: {
      const uint32_t bits = static_cast<uint32_t>(row[2 * i] | (row[2 * i + 1] << 8)) << 16;
      return __uint_as_float(bits);
    }
    case ty::Q4_0: {
      const uint8_t* b = row + (i / 32) * 18;
      const int j = static_cast<int>(i % 32);
      const int q = j < 16 ? (b[2 + j] & 0xf) : (b[2 + j - 16] >> 4);
      return static_cast<float>(q - 8) * h2f(b);
    }
    case ty::Q4_1: {
      const uint8_t* b = row + (i / 32) * 20;
      const int j = static_cast<int>(i % 32);
      const int q = j < 16 ? (b[4 + j] & 0xf) : (b[4 + j - 16] >> 4);
      return static_cast<float>(q) * h2f(b) + h2f(b + 2);
    }
    case ty::Q5_0: {
      const uint8_t* b = row + (i / 32) * 22;
      const int j = static_cast<int>(i % 32);
      const uint32_t qh = rd32(b + 2);
      const int q = j < 16 ? ((b[6 + j] & 0xf) | static_cast<int>(((qh >> j) << 4) & 0x10))
                           : ((b[6 + j - 16] >> 4) | static_cast<int>((qh >> (j - 16 + 12)) & 0x10));
      return static_cast<float>(q - 16) * h2f(b);
    }
    case ty::Q5_1: {
      const uint8_t* b = row + (i / 32) * 24;
      const int j = static_cast<int>(i % 32);
      const uint32_t qh = rd32(b + 4);
      const int q = j < 16 ? ((b[8 + j] & 0xf) | static_cast<int>(((qh >> j) << 4) & 0x10))
                           : ((b[8 + j - 16] >> 4) | static_cast<int>((qh >> (j - 16 + 12)) & 0x10));
      return static_cast<float>(q) * h2f(b) + h2f(b + 2);
    }
    case ty::Q8_0: {
      const uint8_t* b = row + (i / 32) * 34;
      return static_cast<float>(static_cast<int8_t>(b[2 + i % 32])) * h2f(b);
    }
    case ty::IQ4_NL: {
      const uint8_t* b = row + (i / 32) * 18;
      const int j = static_cast<int>(i % 32);
      const int q = j < 16 ? (b[2 + j] & 0xf) : (b[2 + j - 16] >> 4);
      return h2f(b) * static_cast<float>(iq4_value(q));
    }
    case ty::Q2_K: {
      const uint8_t* b = row + (i / 256) * 84;
      const int e = static_cast<int>(i % 256);
      const int half = e / 128, shift = ((e % 128) / 32) * 2, part = (e % 32) / 16, l = e % 16;
      const int is = half * 8 + (shift / 2) * 2 + part;
      const int sc = b[is];
      const float dl = h2f(b + 80) * static_cast<float>(sc & 0xf), ml = h2f(b + 82) * static_cast<float>(sc >> 4);
      return dl * static_cast<float>((b[16 + half * 32 + l + 16 * part] >> shift) & 3) - ml;
    }
    case ty::Q3_K: {
      const uint8_t* b = row + (i / 256) * 110;
      const int e = static_cast<int>(i % 256);
      const int half = e / 128, s2 = (e % 128) / 32, part = (e % 32) / 16, l = e % 16;
      const int is = half * 8 + s2 * 2 + part, shift = 2 * s2, k = l + 16 * part;
      const uint8_t* packed = b + 96;
      const int low = is < 8 ? (packed[is] & 0xf) : (packed[is - 8] >> 4);
      const int high = (packed[8 + (is % 4)] >> (2 * (is / 4))) & 3;
      const int sc = (low | (high << 4)) - 32;
      const int m = 1 << (half * 4 + s2);
      const int v = ((b[32 + half * 32 + k] >> shift) & 3) - ((b[k] & m) ? 0 : 4);
      return h2f(b + 108) * static_cast<float>(sc) * static_cast<float>(v);
    }
    case ty::Q4_K: {
      const uint8_t* b = row + (i / 256) * 144;
      const int e = static_cast<int>(i % 256);
      const int c = e / 64, w = e % 64, l = w % 32, j = 2 * c + (w >= 32);
      int sc, m;
      scale_min_k4(j, b + 4, sc, m);
      const float dj = h2f(b) * static_cast<float>(sc), mj = h2f(b + 2) * static_cast<float>(m);
      const int q = w < 32 ? (b[16 + c * 32 + l] & 0xf) : (b[16 + c * 32 + l] >> 4);
      return dj * static_cast<float>(q) - mj;
    }
    case ty::Q5_K: {
      const uint8_t* b = row + (i / 256) * 176;
      const int e = static_cast<int>(i % 256);
      const int c = e / 64, w = e % 64, l = w % 32, j = 2 * c + (w >= 32);
      int sc, m;
      scale_min_k4(j, b + 4, sc, m);
      const float dj = h2f(b) * static_cast<float>(sc), mj = h2f(b + 2) * static_cast<float>(m);
      const uint8_t ql = b[48 + c * 32 + l], qh = b[16 + l];
      const int bit = w < 32 ? (1 << (2 * c)) : (2 << (2 * c));
      const int q = (w < 32 ? (ql & 0xf) : (ql >> 4)) + ((qh & bit) ? 16 : 0);
      return dj * static_cast<float>(q) - mj;
    }
    case ty::Q6_K: {
      const uint8_t* b = row + (i / 256) * 210;
      const int e = static_cast<int>(i % 256);
      const int half = e / 128, w = e % 128, quarter = w / 32, l = w % 32;
      const uint8_t* ql = b + 64 * half;
      const uint8_t* qh = b + 128 + 32 * half;
      const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192 + 8 * half);
      const int lo = quarter == 0 ? (ql[l] & 0xf) : quarter == 1 ? (ql[l + 32] & 0xf) : quarter == 2 ? (ql[l] >> 4) : (ql[l + 32] >> 4);
      const int q = (lo | (((qh[l] >> (2 * quarter)) & 3) << 4)) - 32;
      return h2f(b + 208) * static_cast<float>(sc[l / 16 + 2 * quarter]) * static_cast<float>(q);
    }
    case ty::IQ4_XS: {
      const uint8_t* b = row + (i / 256) * 136;
      const int e = static_cast<int>(i % 256);
      const int ib = e / 32, j = e % 32;
      const int sh = b[2] | (b[3] << 8);
      const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
      const float dl = h2f(b) * static_cast<float>(ls - 32);
      const uint8_t* qs = b + 8 + ib * 16;
      const int q = j < 16 ? (qs[j] & 0xf) : (qs[j - 16] >> 4);
      return dl * static_cast<float>(iq4_value(q));
    }
    case ty::FP8_E4M3_B128:
    case ty::FP8_E5M2_B128: {
      const uint8_t* b = row + (i / 128) * 132;
      const float s = __uint_as_float(rd32(b));
      const uint8_t c = b[4 + i % 128];
      return (type == ty::FP8_E4M3_B128 ? fp8_e4m3(c) : fp8_e5m2(c)) * s;
    }
    case ty::I4_G32:
    case ty::I4_G64:
    case ty::I4_G128: {
      const int g = type == ty::I4_G32 ? 32 : type == ty::I4_G64 ? 64 : 128;
      const uint8_t* b = row + (i / g) * (4 + g / 2);
      const int j = static_cast<int>(i % g), half = g / 2;
      const int q = j < half ? (b[4 + j] & 0xf) : (b[4 + j - half] >> 4);
      return (static_cast<float>(q) - h2f(b + 2)) * h2f(b);
    }
    case ty::I8_G32:
    case ty::I8_G64:
    case ty::I8_G128: {
      const int g = type == ty::I8_G32 ? 32 : type == ty::I8_G64 ? 64 : 128;
      const uint8_t* b = row + (i / g) * (4 + g);
      return (static_cast<float>(b[4 + i % g]) - h2f(b + 2)) * h2f(b);
    }
  }
  return __int_as_float(0x7fc00000);  // not reached: supports() admits only the types above
}

}  // namespace sy::cuda
