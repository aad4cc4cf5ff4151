// Q8_0 activations in the layouts of the kernels that take a weight's offset or zero point
// back through activation sums (dot.hpp's act_q8_0_sums and act_q8_0_gsums).
#pragma once

#include <cstdint>
#include <cstring>

namespace sy::cpu {
// Internal linkage: a helper compiled with one unit's ISA flags must never be the copy that
// another unit (or the baseline code) links to (dot_tables.hpp).
namespace {

inline float ld_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

/// act_q8_0_sums (Q4_0_X16, Q8_0_X16): 40 bytes a block: f32 d (the f16 value Q8_0
/// stores), the int32 sum of its 32 levels, the levels.
namespace q8s {

inline constexpr size_t kBlock = 40;  ///< bytes of one 32-element block
inline constexpr size_t kLevels = 8;  ///< offset of the levels in a block

/// Bytes of a row of n elements.
inline size_t row_bytes(int64_t n) { return static_cast<size_t>(n / 32) * kBlock; }

}  // namespace q8s

/// act_q8_0_gsums (I4_G*, I8_G*): planar, so the row kernels read 64 levels, or a vector of
/// scales, with one load that the multiply takes as its memory operand:
/// - the n levels, in element order;
/// - per pair of 32-element blocks, 16 floats: the first block's d 8 times, the second's 8
///   times (0 for a missing second block): a 512-bit scale vector for the pair, or one
///   256-bit vector per block;
/// - the f32 sums of d * (sum of levels) per 32, then per 64, then per 128 elements (pairwise
///   from the per-32 ones), so the zero-point term of a group of G weights is one load.
namespace q8g {

inline size_t pairs(int64_t n) { return static_cast<size_t>((n / 32 + 1) / 2); }
/// Offset of the scale vectors; block b's 8 copies are at scales + 32 * b bytes.
inline size_t scales_offset(int64_t n) { return static_cast<size_t>(n); }
/// Offset of the group sums for groups of g elements (32, 64, 128).
inline size_t group_sums_offset(int64_t n, int g) {
  const int64_t before = g == 32 ? 0 : g == 64 ? n / 32 : n / 32 + n / 64;
  return scales_offset(n) + 64 * pairs(n) + 4 * static_cast<size_t>(before);
}
/// Bytes of a row of n elements.
inline size_t row_bytes(int64_t n) { return group_sums_offset(n, 128) + 4 * static_cast<size_t>(n / 128); }

}  // namespace q8g
}  // namespace
}  // namespace sy::cpu
