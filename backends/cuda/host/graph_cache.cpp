#include "host/graph_cache.hpp"

#include <algorithm>
#include <utility>

namespace sy::cuda {

GraphCache::Action GraphCache::decide(uint64_t key, size_t nodes) {
  if (capacity_ == 0 || warmup_ == 0) return Action::eager;
  if (entries_.size() >= kMaxTracked && !entries_.count(key)) forget_unseen();
  Entry& e = entries_[key];
  e.last_use = ++clock_;
  if (e.nodes != nodes) {  // a new key, or a collision with a different sub-graph: start over
    if (e.handle) return Action::eager;  // never replay a graph for a different sub-graph
    e.nodes = nodes;
    e.seen = 0;
  }
  if (e.handle) {
    ++replays_;
    return Action::replay;
  }
  if (++e.seen < warmup_) return Action::eager;
  return Action::capture;
}

std::vector<void*> GraphCache::store(uint64_t key, size_t nodes, void* handle) {
  std::vector<void*> evicted;
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.nodes != nodes || it->second.handle) {
    evicted.push_back(handle);  // not what decide() asked for: do not keep it
    return evicted;
  }
  size_t held = size();
  while (held >= capacity_) {
    auto oldest = entries_.end();
    for (auto j = entries_.begin(); j != entries_.end(); ++j)
      if (j->second.handle && (oldest == entries_.end() || j->second.last_use < oldest->second.last_use)) oldest = j;
    if (oldest == entries_.end()) break;
    evicted.push_back(oldest->second.handle);
    entries_.erase(oldest);
    --held;
  }
  it->second.handle = handle;  // still valid: only entries holding a graph were erased
  ++captures_;
  return evicted;
}

void GraphCache::forget_unseen() {
  // Prefill shapes change every step: their counts must not pile up. Half of the keys
  // without a graph go, the least recently used first.
  std::vector<std::pair<uint64_t, uint64_t>> idle;  // last_use, key
  for (const auto& [k, e] : entries_)
    if (!e.handle) idle.emplace_back(e.last_use, k);
  std::sort(idle.begin(), idle.end());
  for (size_t i = 0; i < (idle.size() + 1) / 2; ++i) entries_.erase(idle[i].second);
}

void* GraphCache::handle(uint64_t key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second.handle;
}

std::vector<void*> GraphCache::clear() {
  std::vector<void*> out;
  for (auto& [k, e] : entries_)
    if (e.handle) out.push_back(e.handle);
  entries_.clear();
  return out;
}

size_t GraphCache::size() const {
  size_t n = 0;
  for (const auto& [k, e] : entries_) n += e.handle != nullptr;
  return n;
}

}  // namespace sy::cuda
