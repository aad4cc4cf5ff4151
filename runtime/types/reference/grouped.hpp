// Reference decoding of Switchyard's grouped-integer and FP8 weight types (dequant_grouped.cpp).
#pragma once

#include <cstdint>

namespace sy::ref {

/// float8_e4m3fn and float8_e5m2 codes to f32, exact (256-entry tables).
float fp8_e4m3_to_fp32(uint8_t code) noexcept;
float fp8_e5m2_to_fp32(uint8_t code) noexcept;

/// One group of I4_G* / I8_G*: f16 scale d, f16 zero point z, then the codes (4-bit: byte j
/// holds element j in its low nibble and element j + group/2 in its high nibble, as Q4_0;
/// 8-bit: one byte each). x = (q - z) * d.
void dequant_int_group(const uint8_t* block, float* y, int group, int bits) noexcept;

/// One block of FP8_E4M3_B128 / FP8_E5M2_B128: an f32 scale s, then 128 codes. x = decode(c) * s.
void dequant_fp8_block(const uint8_t* block, float* y, bool e5m2_codes) noexcept;

}  // namespace sy::ref
