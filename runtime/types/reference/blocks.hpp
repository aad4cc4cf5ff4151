// The reference block functions of the built-in storage types: one block of the type to
// f32 (sy::ref::deq, dequant.cpp) and f32 to one block (sy::quant, quantize_*.cpp). The
// type registry wraps them into row functions (builtin_types.cpp).
#pragma once

#include <cstdint>

namespace sy::ref::deq {

void q4_0(const uint8_t* b, float* y);
void q4_1(const uint8_t* b, float* y);
void q5_0(const uint8_t* b, float* y);
void q5_1(const uint8_t* b, float* y);
void q8_0(const uint8_t* b, float* y);
void q8_1(const uint8_t* b, float* y);
void q2_k(const uint8_t* b, float* y);
void q3_k(const uint8_t* b, float* y);
void q4_k(const uint8_t* b, float* y);
void q5_k(const uint8_t* b, float* y);
void q6_k(const uint8_t* b, float* y);
void q8_k(const uint8_t* b, float* y);
void iq4_nl(const uint8_t* b, float* y);
void iq4_xs(const uint8_t* b, float* y);

}  // namespace sy::ref::deq
