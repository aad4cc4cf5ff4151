// Reading weight blocks, on the device and on the host alike: nvcc compiles these for the
// kernels, and the host unit tests compile the same functions with the C++ compiler to check
// the kernels' arithmetic against the CPU's scalar reference without a GPU.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#include <cuda_fp16.h>
#define SY_HD __host__ __device__
#else
#define SY_HD
#endif

namespace sy::cuda {

/// The f16 value at p (little-endian), exactly.
SY_HD inline float h2f(const uint8_t* p) {
  const auto bits = static_cast<unsigned short>(p[0] | (p[1] << 8));
#ifdef __CUDA_ARCH__
  return __half2float(__ushort_as_half(bits));
#else
  // Exact widening: every f16 is an f32.
  const uint32_t sign = (bits & 0x8000u) << 16, exp = (bits >> 10) & 0x1f, man = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0x1f) {
    out = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    out = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    out = sign;
  } else {  // subnormal: normalise
    int e = -1;
    uint32_t m = man;
    do {
      ++e;
      m <<= 1;
    } while ((m & 0x400u) == 0);
    out = sign | (static_cast<uint32_t>(112 - e) << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  __builtin_memcpy(&f, &out, 4);
  return f;
#endif
}

SY_HD inline uint32_t rd32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

#ifdef __CUDACC__
__constant__ static const int8_t kIQ4[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
#endif
/// The IQ4_NL / IQ4_XS value of a 4-bit index.
SY_HD inline int iq4_value(int i) {
#ifdef __CUDA_ARCH__
  return kIQ4[i];
#else
  constexpr int8_t table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  return table[i];
#endif
}

/// The 6-bit (scale, min) pair j of a Q4_K / Q5_K super-block.
SY_HD inline void scale_min_k4(int j, const uint8_t* s, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

}  // namespace sy::cuda
