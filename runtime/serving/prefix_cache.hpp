// Prefix caching: full KV blocks of finished prompts stay in the pool, keyed by a hash of
// every token up to the block's end, so a new request whose prompt starts the same way
// attaches those blocks instead of recomputing them. The cache holds one reference on each
// block it keeps; a block only the cache holds is evicted (least recently used, deepest
// first) when the pool runs short. Hybrid models (linear-attention layers) can resume only
// where their recurrent state was saved, so their entries carry a state checkpoint slot and
// a match must end on one.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/kv_cache.hpp"

namespace sy::serving {

class PrefixCache {
 public:
  /// `kv` must outlive the cache; `checkpoints` is the number of state slots it may use.
  PrefixCache(kv::KvCache& kv, int64_t checkpoints);
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  struct Match {
    std::vector<int32_t> blocks;  ///< the cached blocks, in order
    int64_t state_slot = -1;      ///< hybrid models: the checkpoint to resume from
    [[nodiscard]] int64_t tokens(int64_t block_size) const {
      return static_cast<int64_t>(blocks.size()) * block_size;
    }
  };
  /// The longest cached prefix of `tokens` no longer than `max_tokens` positions.
  Match lookup(std::span<const int32_t> tokens, int64_t max_tokens);

  /// Caches the full blocks of a sequence holding `tokens` (at least as many as its
  /// positions) in `blocks`, up to `n_tokens` positions.
  void insert(std::span<const int32_t> tokens, std::span<const int32_t> blocks, int64_t n_tokens);

  /// A free checkpoint slot for a state saved after `n_tokens` of `tokens` (evicting the
  /// least recently used one when all are taken), or -1 when the cache keeps none. The
  /// caller saves the state into it, then calls checkpoint_saved.
  int64_t take_checkpoint_slot();
  /// Records that `slot` holds the state after `n_tokens` (a multiple of the block size)
  /// positions of `tokens`; it is used once the blocks up to there are cached.
  void checkpoint_saved(std::span<const int32_t> tokens, int64_t n_tokens, int64_t slot);

  /// Releases cached blocks no sequence uses until `need` blocks are free (or none is
  /// left to release). Returns the number of free blocks afterwards.
  int64_t make_room(int64_t need);
  /// Blocks only the cache holds (what make_room could free).
  [[nodiscard]] int64_t evictable() const;
  /// Drops every entry (and releases every block).
  void clear();

  [[nodiscard]] int64_t cached_blocks() const { return static_cast<int64_t>(entries_.size()); }

 private:
  struct Entry {
    int32_t block = -1;
    int64_t depth = 0;       // block index within its prompt
    uint64_t parent = 0;     // hash of the previous block's entry (0 for the first)
    std::vector<int32_t> tokens;  // the block's tokens, to rule out hash collisions
    int64_t state_slot = -1;
    uint64_t used = 0;       // last use (tick)
  };
  static uint64_t chain(uint64_t parent, std::span<const int32_t> block);
  void evict(uint64_t key);
  void touch(Entry& e) { e.used = ++tick_; }

  kv::KvCache& kv_;
  int64_t block_size_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::vector<int64_t> free_slots_;
  // A saved state waits here (hash of its last block -> slot) until that block is cached.
  std::unordered_map<uint64_t, int64_t> pending_slots_;
  uint64_t tick_ = 0;
};

}  // namespace sy::serving
