// The storage type ids and block geometry the CUDA kernels decode, as plain constants nvcc
// can see (the SDK's StorageType, switchyard/storage.hpp; matmul.cpp checks they agree).
#pragma once

#include <cstdint>

namespace sy::cuda::ty {

enum : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, IQ4_NL = 20, IQ4_XS = 23, BF16 = 30,
  FP8_E4M3_B128 = 1002, FP8_E5M2_B128 = 1003,
  I4_G32 = 1010, I4_G64 = 1011, I4_G128 = 1012, I8_G32 = 1020, I8_G64 = 1021, I8_G128 = 1022,
};

}  // namespace sy::cuda::ty
