// Helpers shared by the .cu files: element addressing through a record's byte strides and a
// grid size for grid-stride loops.
#pragma once

#include <cstdint>

#include "kernels/record.hpp"

namespace sy::cuda {

/// Byte offset of element (i0, i1, i2, i3) of slot `s`.
__device__ inline int64_t offset_of(const NodeRecord& r, int s, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  return i0 * r.nb[s][0] + i1 * r.nb[s][1] + i2 * r.nb[s][2] + i3 * r.nb[s][3];
}

template <typename T>
__device__ inline T* at(const NodeRecord& r, int s, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(r.addr[s] + offset_of(r, s, i0, i1, i2, i3)));
}

/// Splits a flat index over slot 0's sizes.
struct Index4 {
  int64_t i0, i1, i2, i3;
};
__device__ inline Index4 unflatten(const NodeRecord& r, int64_t flat) {
  Index4 x;
  x.i0 = flat % r.ne[0][0];
  flat /= r.ne[0][0];
  x.i1 = flat % r.ne[0][1];
  flat /= r.ne[0][1];
  x.i2 = flat % r.ne[0][2];
  x.i3 = flat / r.ne[0][2];
  return x;
}

/// The sum of `v` over the 32 lanes of a warp, in every lane.
__device__ inline float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

inline int64_t elements(const NodeRecord& r, int s) { return r.ne[s][0] * r.ne[s][1] * r.ne[s][2] * r.ne[s][3]; }
inline int64_t rows(const NodeRecord& r, int s) { return r.ne[s][1] * r.ne[s][2] * r.ne[s][3]; }

/// Blocks for a grid-stride loop over `n` items of `per_block`: enough to fill any GPU,
/// never more than the work needs.
inline unsigned grid_for(int64_t n, int per_block) {
  const int64_t b = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

}  // namespace sy::cuda
