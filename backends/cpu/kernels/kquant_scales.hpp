// Unpacking the 12-byte K-quant scale block (8 six-bit scales and 8 six-bit mins, as in
// Q4_K/Q5_K) in a few word operations instead of eight branchy byte extractions.
#pragma once

#include <cstdint>
#include <cstring>

namespace sy::cpu {
// Internal linkage: a helper compiled with one unit's ISA flags must never be the copy that
// another unit (or the baseline code) links to (dot_tables.hpp).
namespace {

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

/// The 16 signed six-bit scales of a Q3_K super-block (12 packed bytes): low nibbles in bytes
/// 0..7 (two per byte), high two bits in bytes 8..11; stored with a +32 bias.
template <class Int>
inline void q3k_scales(const uint8_t* p, Int out[16]) {
  for (int g = 0; g < 16; ++g) {
    const int low = g < 8 ? (p[g] & 0xf) : (p[g - 8] >> 4);
    out[g] = static_cast<Int>((low | (((p[8 + (g % 4)] >> (2 * (g / 4))) & 3) << 4)) - 32);
  }
}

}  // namespace
}  // namespace sy::cpu
