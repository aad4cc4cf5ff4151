// Which sub-graphs are replayed as CUDA graphs. A decode step runs the same sub-graphs (same
// ops, types, shapes and strides; the scheduler's shape_key) step after step, with only the
// buffer addresses changing; kernels read their addresses from a node-record array in device
// memory, so a captured graph stays valid and each replay only refreshes that array. A key
// is captured once it was seen `warmup` times (prefill shapes change every step and are never
// worth a capture), and the least recently used graph goes when `capacity` are held.
// No CUDA here: the handles are opaque, so the bookkeeping is tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace sy::cuda {

class GraphCache {
 public:
  enum class Action {
    eager,    ///< launch the kernels one by one
    capture,  ///< launch them under stream capture and store() the graph
    replay,   ///< launch the stored graph (handle())
  };

  GraphCache(uint32_t warmup, size_t capacity) : warmup_(warmup), capacity_(capacity) {}

  /// What to do for a sub-graph with this key and node count (the count guards against a
  /// hash collision between different sub-graphs).
  Action decide(uint64_t key, size_t nodes);
  /// Stores the graph captured for `key`. Returns the handles evicted to make room, which
  /// the caller destroys.
  std::vector<void*> store(uint64_t key, size_t nodes, void* handle);
  /// The stored handle for a key decide() answered replay for.
  [[nodiscard]] void* handle(uint64_t key) const;
  /// Forgets everything (a failed replay, a device reset); returns the handles to destroy.
  std::vector<void*> clear();

  [[nodiscard]] size_t size() const;
  [[nodiscard]] uint64_t replays() const { return replays_; }
  [[nodiscard]] uint64_t captures() const { return captures_; }

 private:
  struct Entry {
    size_t nodes = 0;
    uint32_t seen = 0;
    void* handle = nullptr;
    uint64_t last_use = 0;
  };
  static constexpr size_t kMaxTracked = 1024;  ///< keys counted at most (graphs held included)
  void forget_unseen();

  uint32_t warmup_;
  size_t capacity_;
  uint64_t clock_ = 0;
  uint64_t replays_ = 0, captures_ = 0;
  std::unordered_map<uint64_t, Entry> entries_;
};

}  // namespace sy::cuda
