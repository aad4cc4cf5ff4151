// Writing f32 values into the cache and copy types on the device: f16 and bf16 rounded to
// nearest even, q8_0 with d = amax/127 and q4_0 with ggml's d = max/-8 (recipes the
// conformance bounds allow next to the CPU's searched scales). Shared by cache.cu and data.cu.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace sy::cuda {

__device__ inline void put16(uint8_t* p, unsigned short v) {
  p[0] = static_cast<uint8_t>(v & 0xff);
  p[1] = static_cast<uint8_t>(v >> 8);
}

__device__ inline unsigned short f32_to_bf16(float x) {
  uint32_t u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40);  // a quiet NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}

__device__ inline void quantize_q8_0(const float* x, uint8_t* out) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(x[j]));
  const float d = amax / 127.f, id = d != 0 ? 1.0f / d : 0.0f;
  put16(out, __half_as_ushort(__float2half_rn(d)));
  for (int j = 0; j < 32; ++j) out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(roundf(x[j] * id)));
}

__device__ inline void quantize_q4_0(const float* x, uint8_t* out) {
  float amax = 0, mx = 0;
  for (int j = 0; j < 32; ++j)
    if (fabsf(x[j]) > amax) amax = fabsf(x[j]), mx = x[j];
  const float d = mx / -8.f, id = d != 0 ? 1.0f / d : 0.0f;
  put16(out, __half_as_ushort(__float2half_rn(d)));
  for (int j = 0; j < 16; ++j)
    out[2 + j] = static_cast<uint8_t>(min(15, static_cast<int>(x[j] * id + 8.5f)) |
                                      (min(15, static_cast<int>(x[j + 16] * id + 8.5f)) << 4));
}

}  // namespace sy::cuda
