// Offsets for a step's intermediates inside one device arena: a best-fit free list, so a
// tensor reuses the bytes of tensors no longer needed (as ggml-alloc does). Only offsets
// are planned here; the scheduler owns the memory.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace sy::graph {

class ArenaPlanner {
 public:
  static constexpr size_t kAlign = 64;

  /// Starts a new plan (keeps capacity).
  void reset();
  /// An offset for `bytes` bytes, aligned to kAlign.
  size_t alloc(size_t bytes);
  /// Returns a block handed out by alloc().
  void release(size_t offset, size_t bytes);
  /// The highest end offset used by this plan.
  [[nodiscard]] size_t peak() const { return peak_; }

 private:
  std::vector<std::pair<size_t, size_t>> free_;  // (offset, size), sorted by offset, never adjacent
  size_t top_ = 0;
  size_t peak_ = 0;
};

}  // namespace sy::graph
