// The paged KV cache and the recurrent-state slots. K/V live in fixed-size blocks of a
// shared pool; each sequence has a block table mapping its positions to blocks (vLLM's
// paged attention). Forking shares the full blocks (reference counted) and copies the
// partly filled last one, so a fork costs at most one block. Linear-attention layers keep
// one state slot per sequence instead. Nothing is allocated after creation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/hparams.hpp"
#include "switchyard/backend.hpp"
#include "switchyard/graph.hpp"

namespace sy::kv {

struct KvConfig {
  StorageType type = StorageType::F16;  ///< F32, F16, Q8_0 or Q4_0
  int64_t n_ctx = 4096;                 ///< most positions one sequence may hold
  int64_t n_seq_max = 1;                ///< sequences alive at once
  int64_t block_size = 32;              ///< positions per block
};

class KvCache {
 public:
  /// Allocates the pool and the state slots, each layer's on its device:
  /// devices[layer_device[il]] (every layer on devices[0] when layer_device is empty).
  static Result<std::unique_ptr<KvCache>> create(const model::HParams& hp, std::span<Device* const> devices,
                                                  std::span<const int> layer_device, const KvConfig& cfg);

  /// Starts an empty sequence with a fresh (zero) recurrent state.
  Status add(int32_t seq);
  /// Frees a sequence's blocks and slot.
  Status remove(int32_t seq);
  /// A new sequence `dst` with the same contents as `src`.
  Status fork(int32_t src, int32_t dst);
  /// Positions held by a sequence (-1 when it does not exist).
  [[nodiscard]] int64_t length(int32_t seq) const;

  /// Extends `seq` by n positions, writing each new position's cache cell to cells[0..n).
  /// Exceeding the context length or running out of blocks is an error; nothing changes then.
  Status extend(int32_t seq, int64_t n, int32_t* cells);
  /// The internal row (block-table row and state slot) of a sequence.
  [[nodiscard]] int32_t row(int32_t seq) const;

  [[nodiscard]] const KvConfig& config() const { return cfg_; }
  /// Device index of each full-attention layer's K/V, and of each linear layer's state.
  [[nodiscard]] std::span<const int> kv_devices() const { return kv_device_; }
  [[nodiscard]] std::span<const int> state_devices() const { return state_device_; }
  /// Bytes of K/V and of recurrent state each device holds (per device index).
  [[nodiscard]] const std::vector<uint64_t>& kv_bytes() const { return kv_bytes_; }
  [[nodiscard]] const std::vector<uint64_t>& state_bytes() const { return state_bytes_; }
  [[nodiscard]] const int32_t* tables() const { return tables_.data(); }
  [[nodiscard]] int64_t table_blocks() const { return max_blocks_; }
  [[nodiscard]] std::span<const GraphTensor> k() const { return k_; }
  [[nodiscard]] std::span<const GraphTensor> v() const { return v_; }
  [[nodiscard]] std::span<const GraphTensor> conv() const { return conv_; }
  [[nodiscard]] std::span<const GraphTensor> delta() const { return delta_; }
  /// Bytes of K and V per token over all full-attention layers.
  [[nodiscard]] uint64_t bytes_per_token() const { return bytes_per_token_; }
  [[nodiscard]] int64_t free_blocks() const { return static_cast<int64_t>(free_.size()); }

 private:
  KvCache() = default;
  Status copy_block(int32_t from, int32_t to);
  Status copy_state(int32_t from_row, int32_t to_row);
  Status zero_state(int32_t row);
  void release_blocks(int32_t row);

  KvConfig cfg_;
  std::vector<int> kv_device_, state_device_;
  std::vector<uint64_t> kv_bytes_, state_bytes_;
  int64_t max_blocks_ = 0;
  uint64_t bytes_per_token_ = 0;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<GraphTensor> k_, v_, conv_, delta_;
  std::vector<int32_t> tables_;    // [n_seq_max][max_blocks]
  std::vector<int32_t> seq_of_row_;  // -1: free row
  std::vector<int64_t> length_;    // per row
  std::vector<int32_t> refs_;      // per block
  std::vector<int32_t> free_;      // free blocks (stack)
};

}  // namespace sy::kv
