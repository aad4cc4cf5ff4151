// The op IR a backend executes: plain arrays of tensors and nodes, resolved to memory by
// the runtime before execution. A backend receives a whole sub-graph at once, so a GPU
// backend can record it once (Vulkan command buffer, CUDA graph) and replay it while the
// shapes stay the same; `shape_key` says when they changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "switchyard/ops.hpp"
#include "switchyard/storage.hpp"

namespace sy {

class Buffer;

/// A tensor of a graph: weights, KV cache and state (persistent), inputs the engine
/// fills, or intermediates placed in the step's arena. Shapes are innermost-first; strides
/// are in bytes (a view is just another tensor with the same buffer and its own strides).
struct GraphTensor {
  StorageType type = StorageType::F32;
  int64_t ne[4] = {1, 1, 1, 1};
  int64_t nb[4] = {0, 0, 0, 0};
  Buffer* buffer = nullptr;  ///< where it lives; nullptr for host inputs
  size_t offset = 0;         ///< byte offset in `buffer`
  void* data = nullptr;      ///< host address when the memory is host-visible, else nullptr

  [[nodiscard]] int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  [[nodiscard]] int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
};

/// Bytes from a tensor's first byte to one past its last (strides are non-negative): what a
/// kernel may touch, for a device's range check. 0 for an empty tensor.
inline uint64_t tensor_extent(const GraphTensor& t) noexcept {
  for (int d = 0; d < 4; ++d)
    if (t.ne[d] <= 0) return 0;
  const auto* info = storage_type_info(static_cast<uint32_t>(t.type));
  uint64_t end = 0;
  if (info && info->block_size == 1)
    end = static_cast<uint64_t>(t.ne[0] - 1) * static_cast<uint64_t>(t.nb[0]) + info->block_bytes;
  else
    end = storage_row_bytes(t.type, static_cast<uint64_t>(t.ne[0])).value_or(0);
  for (int d = 1; d < 4; ++d) end += static_cast<uint64_t>(t.ne[d] - 1) * static_cast<uint64_t>(t.nb[d]);
  return end;
}

constexpr int kMaxSources = 8;

/// One operation. Sources and the destination index the sub-graph's tensor array; unused
/// sources are -1. Integer and float parameters are per op:
///
/// | op | sources | parameters |
/// |---|---|---|
/// | get_rows | table [k, n] (any type), ids I32 [m] | - ; dst F32 [k, m] |
/// | rms_norm, l2_norm | x | f[0] eps (per row; l2: x / max(norm, eps)) |
/// | matmul | W [k, rows], X F32 [k, m...] | - ; dst [rows, m...] |
/// | matmul_id | W [k, rows, experts], X [k, 1 or used, tokens], ids I32 [used, tokens] | - |
/// | add, mul | a, b (b broadcasts where its size is 1) | - |
/// | scale | x | f[0] factor |
/// | swiglu | gate, up | - |
/// | silu, gelu, sigmoid, softplus | x | - |
/// | softmax | x | - (per row) |
/// | rope | x [hd, heads, tokens], positions I32 [tokens], optional factors F32 [rotated dims / 2] (pair i's angle divided by factor i) | i[0] mode (0 normal, 1 neox, 2 multi), i[1] rotated dims, i[2..5] sections; f[0] base, f[1] scale |
/// | top_k | x [n, rows] | i[0] k; dst I32 [k, rows], descending, ties to the lower index |
/// | expert_weights | probs [experts, tokens], ids I32 [used, tokens] | i[0] renormalise; f[0] scale; dst [used, tokens] |
/// | moe_combine | y [d, used, tokens], w [used, tokens] | - ; dst [d, tokens] = sum over used |
/// | gather_cols | x F32 [k, rows...], ids I32 [m] (each < k) | - ; dst [m, rows...], dst[j, r] = x[ids[j], r] (an act-order GPTQ linear's input order) |
/// | fp8_qdq | x F32, then 1 to 7 scale tensors F32 (any shape) | - ; dst shaped as x, dst = fp8_e4m3_qdq(x, s) (quant.hpp) with s the largest element of the scale tensors (a static FP8 activation scale; the largest of several is vLLM's choice for linears that share one activation) |
/// | copy | x (any layout) | - ; dst contiguous, converted to dst's type |
/// | set_rows | rows F32 [k, m], slots I32 [m] | - ; dst (a cache) row slots[i] = rows i, in dst's type |
/// | conv1d | x [ch, tokens], w [K, ch], state F32 [(K-1) ch, slots], slot I32 [tokens] | - |
/// | delta_net | q, k [d, kh, t], v [d, vh, t], g, beta [vh, t], state F32 [d d vh, slots], slot I32 [t] | - |
/// | attention | q [hd, heads, t], K, V caches [hd, kv_heads, cells], pos I32 [t], seq I32 [t], tables I32 [blocks, seqs] | i[0] block size; f[0] scale |
///
/// Recurrent ops and attention take the tokens of one sequence as a contiguous run; the
/// `slot`/`seq` input names the state slot or block-table row of each token.
struct GraphNode {
  OpKind op = OpKind::copy;
  int32_t dst = -1;
  int32_t src[kMaxSources] = {-1, -1, -1, -1, -1, -1, -1, -1};
  int32_t i[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float f[4] = {0, 0, 0, 0};
};

/// A sub-graph handed to one device: every node runs there, in order.
struct SubGraph {
  std::span<const GraphTensor> tensors;
  std::span<const GraphNode> nodes;
  uint64_t shape_key = 0;  ///< equal keys: same nodes and shapes as a previous call (replayable)
};

}  // namespace sy
