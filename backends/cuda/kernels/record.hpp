// What a CUDA kernel reads about its node: device addresses, shapes and byte strides of the
// destination (slot 0) and sources (slot 1 + s), and the node's parameters. Plain data with
// no SDK include, so .cu files compiled by nvcc share it with the host code. Kernels read the
// record from a device array the executor refreshes before every launch (or graph replay),
// which is what lets a captured CUDA graph run again on other buffers.
#pragma once

#include <cstdint>

namespace sy::cuda {

constexpr int kSlots = 9;  ///< destination + kMaxSources

struct NodeRecord {
  uint64_t addr[kSlots];    ///< device address of each slot's first element, 0 if unused
  int64_t ne[kSlots][4];    ///< sizes, innermost first
  int64_t nb[kSlots][4];    ///< byte strides
  uint32_t type[kSlots];    ///< storage type ids
  uint32_t n_src;
  int32_t ip[8];            ///< GraphNode::i
  float fp[4];              ///< GraphNode::f
  uint64_t scratch;         ///< device address of the node's scratch (a prep stage's output), else 0
};

}  // namespace sy::cuda
