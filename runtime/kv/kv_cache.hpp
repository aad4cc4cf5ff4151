// The paged KV cache and the recurrent-state slots. K/V live in fixed-size blocks of a
// shared pool; each sequence has a block table mapping its positions to blocks (vLLM's
// paged attention). Forking shares the full blocks (reference counted) and copies the
// partly filled last one, so a fork costs at most one block; a shared block is copied before
// it is written (copy on write). The pool is sized in blocks, not in sequences x context, so
// a server admits sequences by free blocks. Linear-attention layers keep one state slot per
// sequence, plus checkpoint slots a prefix cache saves states into. Nothing is allocated
// after creation.
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
  /// Blocks in the pool, shared by all sequences; 0: enough for every sequence at full length.
  int64_t n_blocks = 0;
  /// Extra recurrent-state slots that hold saved states (hybrid models' prefix cache).
  int64_t n_state_checkpoints = 0;
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
  /// Shortens `seq` to `len` positions, freeing the blocks past it (the rollback of extend).
  /// A sequence with recurrent state can only be cut to 0 or left as is, since its state
  /// cannot be rewound (restore a checkpoint instead) — unless `state_unchanged`: the caller
  /// knows nothing ran since the sequence was `len` long.
  Status truncate(int32_t seq, int64_t len, bool state_unchanged = false);
  /// Blocks (in order) holding the positions of `seq`.
  [[nodiscard]] std::span<const int32_t> blocks(int32_t seq) const;
  /// Starts the empty sequence `seq` with the given full blocks (shared: each gains a
  /// reference) as its first positions, e.g. a cached prompt prefix.
  Status attach(int32_t seq, std::span<const int32_t> blocks);
  /// Adds a reference to a block (a cache holding it), or drops one; a block whose last
  /// reference is dropped returns to the pool.
  void retain(int32_t block);
  void release(int32_t block);
  /// References a block has (0: free).
  [[nodiscard]] int32_t refs(int32_t block) const { return refs_[static_cast<size_t>(block)]; }
  /// Copies a sequence's recurrent state into checkpoint slot `slot`, or back.
  Status save_state(int32_t seq, int64_t slot);
  Status load_state(int64_t slot, int32_t seq);
  /// True when the model has linear-attention layers (a state per sequence).
  [[nodiscard]] bool has_state() const { return !conv_.empty(); }
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
  [[nodiscard]] int64_t total_blocks() const { return static_cast<int64_t>(refs_.size()); }

 private:
  KvCache() = default;
  Status copy_block(int32_t from, int32_t to);
  Status copy_state(int32_t from_row, int32_t to_row);
  Status zero_state(int32_t row);
  void release_blocks(int32_t row);
  Status unshare(int32_t row, int64_t block_index);

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
