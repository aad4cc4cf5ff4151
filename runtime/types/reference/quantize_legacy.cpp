// Block quantizers of the 32-element types: Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1.
#include "quant_internal.hpp"

namespace sy::quant {

void q4_0(const float* x, const float* w, u8* b) {
  int8_t q[32];
  const float d = best_symmetric(x, w, 32, -8, 7, q);
  put16(b, fp32_to_fp16(d));
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<u8>((q[j] + 8) | ((q[j + 16] + 8) << 4));
}

void q5_0(const float* x, const float* w, u8* b) {
  int8_t q[32];
  const float d = best_symmetric(x, w, 32, -16, 15, q);
  put16(b, fp32_to_fp16(d));
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = q[j] + 16, hi = q[j + 16] + 16;
    b[6 + j] = static_cast<u8>((lo & 0xf) | ((hi & 0xf) << 4));
    qh |= static_cast<uint32_t>((lo >> 4) & 1) << j;
    qh |= static_cast<uint32_t>((hi >> 4) & 1) << (j + 16);
  }
  std::memcpy(b + 2, &qh, 4);
}

void q4_1(const float* x, const float* w, u8* b) {
  uint8_t q[32];
  float d, m;
  best_affine(x, w, 32, 15, q, d, m);
  put16(b, fp32_to_fp16(d));
  put16(b + 2, fp32_to_fp16(m));
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<u8>(q[j] | (q[j + 16] << 4));
}

void q5_1(const float* x, const float* w, u8* b) {
  uint8_t q[32];
  float d, m;
  best_affine(x, w, 32, 31, q, d, m);
  put16(b, fp32_to_fp16(d));
  put16(b + 2, fp32_to_fp16(m));
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    b[8 + j] = static_cast<u8>((q[j] & 0xf) | ((q[j + 16] & 0xf) << 4));
    qh |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
    qh |= static_cast<uint32_t>((q[j + 16] >> 4) & 1) << (j + 16);
  }
  std::memcpy(b + 4, &qh, 4);
}

void q8_0(const float* x, const float* w, u8* b) {
  int8_t q[32];
  const float d = best_symmetric(x, w, 32, -127, 127, q);
  put16(b, fp32_to_fp16(d));
  std::memcpy(b + 2, q, 32);
}

// Q8_1 is an activation type: d plus s = d * sum(q), which the Q4_1/Q5_1 dot products use.
void q8_1(const float* x, const float*, u8* b) {
  int8_t q[32];
  const float d = best_symmetric(x, nullptr, 32, -127, 127, q);
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += q[j];
  put16(b, fp32_to_fp16(d));
  put16(b + 2, fp32_to_fp16(d * static_cast<float>(sum)));
  std::memcpy(b + 4, q, 32);
}

}  // namespace sy::quant
