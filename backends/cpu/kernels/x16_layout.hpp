// What the interleaved-layout kernels of every ISA share (quant.hpp's repack_rows() gives the
// layouts): the column sizes and the Q8_K block sums in the pairs the Q4_K_X16 mins and the
// Q6_K_X16 offset take.
// Plain C++, so the AVX2 and AVX-512 kernels read the same bytes the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sy::cpu {
// Internal linkage: a helper compiled with one unit's ISA flags must never be the copy that
// another unit (or the baseline code) links to (dot_tables.hpp).
namespace {
namespace x16 {

inline constexpr size_t kQ4kColumn = 2304;  ///< one Q4_K_X16 super-block column of 16 rows
inline constexpr size_t kQ8K = 292;         ///< one Q8_K activation block: f32 d, 256 int8, 16 int16 block sums

/// Two int16 values as one 32-bit lane (lo in the low half), for a broadcast that meets
/// unpacked int16 pairs in vpmaddwd / vpdpwssd.
inline int pack_pair(int16_t lo, int16_t hi) {
  return static_cast<int>(static_cast<uint16_t>(lo) | static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16);
}

/// int16 pairs (s[b], s[b + 2]) of the 32-element block sums of one Q8_K activation
/// super-block, for a 16-bit multiply-add against the Q4_K mins, which the kernels unpack
/// as pairs (m[b], m[b + 2]) per 32-bit lane.
struct BlockSums {
  int pair[4];  ///< b = 0, 1, 4, 5
};
inline BlockSums block_sums(const uint8_t* a) {
  int16_t bs[16];
  std::memcpy(bs, a + 260, sizeof bs);
  int16_t s[8];
  for (int b = 0; b < 8; ++b) s[b] = static_cast<int16_t>(bs[2 * b] + bs[2 * b + 1]);
  return {{pack_pair(s[0], s[2]), pack_pair(s[1], s[3]), pack_pair(s[4], s[6]), pack_pair(s[5], s[7])}};
}

/// int16 pairs (s[2j], s[2j + 1]) of the 16-element block sums of one Q8_K activation
/// super-block, j = 0..7: the Q6_K offset of partial sum j takes sub-blocks 2j and 2j + 1
/// (the row-major Q6_K kernels' lane j, which the interleaved ones reproduce).
struct Q6kSums {
  int pair[8];
};
inline Q6kSums q6k_sums(const uint8_t* a) {
  int16_t bs[16];
  std::memcpy(bs, a + 260, sizeof bs);
  Q6kSums s{};
  for (int j = 0; j < 8; ++j) s.pair[j] = pack_pair(bs[2 * j], bs[2 * j + 1]);
  return s;
}

}  // namespace x16
}  // namespace
}  // namespace sy::cpu
