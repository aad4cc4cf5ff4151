// Cache rows to f32 with loops the compiler vectorizes: the SDK's dequantize_row converts
// f16 one element per out-of-line call, which dominated attention over an f16 cache. The
// conversions are exact, so the results equal dequantize_row's bit for bit (NaN payloads
// included); other types go through dequantize_row.
#pragma once

#include <cstdint>
#include <cstring>

#include "switchyard/quant.hpp"

namespace sy::cpu {

/// n IEEE halves to floats, exactly; selects by masks, not branches, so that it vectorizes.
inline void f16_to_f32_row(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    const uint32_t em = static_cast<uint32_t>(h & 0x7fff) << 13;  // exponent and mantissa in place
    const uint32_t exp = em & 0x0f800000u;
    const uint32_t inf_nan = 0u - static_cast<uint32_t>(exp == 0x0f800000u);
    const uint32_t subnormal = 0u - static_cast<uint32_t>(exp == 0);
    // Normal: rebias the exponent by 127 - 15; inf/NaN: by as much again, to all ones.
    const uint32_t normal = em + (112u << 23) + (inf_nan & (112u << 23));
    // Subnormal (or zero): m 2^-24, formed exactly as (2^-14 + m 2^-24) - 2^-14.
    const uint32_t biased = em + (113u << 23);
    float sub;
    std::memcpy(&sub, &biased, 4);
    sub -= 6.103515625e-05f;  // 2^-14
    uint32_t sub_bits;
    std::memcpy(&sub_bits, &sub, 4);
    const uint32_t out = (normal & ~subnormal) | (sub_bits & subnormal) | (static_cast<uint32_t>(h & 0x8000) << 16);
    std::memcpy(dst + i, &out, 4);
  }
}

/// A row of `type` to floats: f32, f16 and bf16 inline, other types by dequantize_row.
inline void row_to_f32(StorageType type, const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const uint8_t*>(src);
  switch (type) {
    case StorageType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); return;
    case StorageType::F16: f16_to_f32_row(b, dst, n); return;
    case StorageType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, b + 2 * i, 2);
        const uint32_t bits = static_cast<uint32_t>(h) << 16;
        std::memcpy(dst + i, &bits, 4);
      }
      return;
    default: (void)dequantize_row(type, src, dst, n); return;
  }
}

}  // namespace sy::cpu
