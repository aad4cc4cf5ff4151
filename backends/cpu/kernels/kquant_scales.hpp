// Unpacking the 12-byte K-quant scale block (8 six-bit scales and 8 six-bit mins, as in
// Q4_K/Q5_K) in a few word operations instead of eight branchy byte extractions.
#pragma once

#include <cstdint>
#include <cstring>

namespace sy::cpu {

/// Words 0-1: the 8 scales (one byte each); words 2-3: the 8 mins. Computed in integer
/// registers: callers build vectors from the words directly, because a round trip through
/// a stack array (four 4-byte stores, then an 8-byte load) stalls store-to-load forwarding.
struct ScaleMinWords {
  uint32_t w[4];
};
inline ScaleMinWords scale_min_words_k4(const uint8_t* packed) {
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t u0, u1, u2;
  std::memcpy(&u0, packed, 4);
  std::memcpy(&u1, packed + 4, 4);
  std::memcpy(&u2, packed + 8, 4);
  return {{u0 & kLow6, (u2 & kLow4) | (((u0 >> 6) & kLow2) << 4), u1 & kLow6,
           ((u2 >> 4) & kLow4) | (((u1 >> 6) & kLow2) << 4)}};
}

}  // namespace sy::cpu
