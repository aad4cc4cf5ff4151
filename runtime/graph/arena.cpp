#include "graph/arena.hpp"

#include <algorithm>

namespace sy::graph {
namespace {
size_t round_up(size_t n) { return (n + ArenaPlanner::kAlign - 1) / ArenaPlanner::kAlign * ArenaPlanner::kAlign; }
}  // namespace

void ArenaPlanner::reset() {
  free_.clear();
  top_ = 0;
  peak_ = 0;
}

size_t ArenaPlanner::alloc(size_t bytes) {
  bytes = round_up(std::max<size_t>(bytes, 1));
  size_t best = free_.size();
  for (size_t i = 0; i < free_.size(); ++i)
    if (free_[i].second >= bytes && (best == free_.size() || free_[i].second < free_[best].second)) best = i;
  if (best != free_.size()) {
    const size_t off = free_[best].first;
    free_[best].first += bytes;
    free_[best].second -= bytes;
    if (free_[best].second == 0) free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
    return off;
  }
  const size_t off = top_;
  top_ += bytes;
  peak_ = std::max(peak_, top_);
  return off;
}

void ArenaPlanner::release(size_t offset, size_t bytes) {
  bytes = round_up(std::max<size_t>(bytes, 1));
  auto it = std::lower_bound(free_.begin(), free_.end(), std::make_pair(offset, size_t{0}));
  it = free_.insert(it, {offset, bytes});
  // Merge with the next and the previous block.
  if (it + 1 != free_.end() && it->first + it->second == (it + 1)->first) {
    it->second += (it + 1)->second;
    free_.erase(it + 1);
  }
  if (it != free_.begin() && (it - 1)->first + (it - 1)->second == it->first) {
    (it - 1)->second += it->second;
    it = free_.erase(it) - 1;
  }
  // A block ending at the top shrinks the top instead.
  if (it->first + it->second == top_) {
    top_ = it->first;
    free_.erase(it);
  }
}

}  // namespace sy::graph
