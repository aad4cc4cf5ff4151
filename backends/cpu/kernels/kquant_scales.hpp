// Unpacking the 12-byte K-quant scale block (8 six-bit scales and 8 six-bit mins, as in
// Q4_K/Q5_K) in a few word operations instead of eight branchy byte extractions.
#pragma once

#include <cstdint>
#include <cstring>

namespace sy::cpu {

/// out[0..7] = scales, out[8..15] = mins.
inline void unpack_scale_min_k4(const uint8_t* packed, uint8_t out[16]) {
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t u[4];
  std::memcpy(u, packed, 12);
  // Bytes 0..3 hold scales 0..3 (low 6 bits) and bytes 4..7 mins 0..3; the top two bits
  // of bytes 0..7 and the nibbles of bytes 8..11 make scales and mins 4..7.
  u[3] = ((u[2] >> 4) & kLow4) | (((u[1] >> 6) & kLow2) << 4);  // mins 4..7
  const uint32_t mins_lo = u[1] & kLow6;                          // mins 0..3
  u[1] = (u[2] & kLow4) | (((u[0] >> 6) & kLow2) << 4);            // scales 4..7
  u[2] = mins_lo;
  u[0] &= kLow6;                                                   // scales 0..3
  std::memcpy(out, u, 16);
}

}  // namespace sy::cpu
