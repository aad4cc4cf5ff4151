#include "serving/prefix_cache.hpp"

#include <algorithm>

namespace sy::serving {

PrefixCache::PrefixCache(kv::KvCache& kv, int64_t checkpoints)
    : kv_(kv), block_size_(kv.config().block_size) {
  for (int64_t s = checkpoints - 1; s >= 0; --s) free_slots_.push_back(s);
}

PrefixCache::~PrefixCache() { clear(); }

uint64_t PrefixCache::chain(uint64_t parent, std::span<const int32_t> block) {
  // splitmix64 steps over the parent's hash and each token: a block's key names every token
  // before its end, so equal keys mean equal prefixes (up to collisions, which lookup rules
  // out by comparing the block's own tokens).
  auto mix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  uint64_t h = mix(parent ^ 0x5157u);
  for (int32_t t : block) h = mix(h ^ static_cast<uint32_t>(t));
  return h == 0 ? 1 : h;
}

PrefixCache::Match PrefixCache::lookup(std::span<const int32_t> tokens, int64_t max_tokens) {
  Match m;
  std::vector<Entry*> path;
  uint64_t parent = 0;
  for (int64_t i = 0; (i + 1) * block_size_ <= std::min<int64_t>(max_tokens, static_cast<int64_t>(tokens.size())); ++i) {
    const auto block = tokens.subspan(static_cast<size_t>(i * block_size_), static_cast<size_t>(block_size_));
    const uint64_t key = chain(parent, block);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.parent != parent || !std::equal(block.begin(), block.end(), it->second.tokens.begin()))
      break;
    path.push_back(&it->second);
    parent = key;
  }
  if (kv_.has_state()) {
    // A hybrid model resumes only where a state was saved.
    while (!path.empty() && path.back()->state_slot < 0) path.pop_back();
    if (!path.empty()) m.state_slot = path.back()->state_slot;
  }
  // Deeper blocks get older ticks, so a chain is evicted from its end.
  for (auto it = path.rbegin(); it != path.rend(); ++it) touch(**it);
  for (const Entry* e : path) m.blocks.push_back(e->block);
  return m;
}

void PrefixCache::insert(std::span<const int32_t> tokens, std::span<const int32_t> blocks, int64_t n_tokens) {
  const int64_t n_full = std::min<int64_t>(std::min<int64_t>(n_tokens, static_cast<int64_t>(tokens.size())) / block_size_,
                                           static_cast<int64_t>(blocks.size()));
  std::vector<Entry*> path;
  uint64_t parent = 0;
  for (int64_t i = 0; i < n_full; ++i) {
    const auto block = tokens.subspan(static_cast<size_t>(i * block_size_), static_cast<size_t>(block_size_));
    const uint64_t key = chain(parent, block);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (it->second.parent != parent || !std::equal(block.begin(), block.end(), it->second.tokens.begin())) break;
    } else {
      Entry e;
      e.block = blocks[static_cast<size_t>(i)];
      e.depth = i;
      e.parent = parent;
      e.tokens.assign(block.begin(), block.end());
      kv_.retain(e.block);
      it = entries_.emplace(key, std::move(e)).first;
    }
    if (auto p = pending_slots_.find(key); p != pending_slots_.end()) {
      if (it->second.state_slot < 0) {
        it->second.state_slot = p->second;
      } else {
        free_slots_.push_back(p->second);
      }
      pending_slots_.erase(p);
    }
    path.push_back(&it->second);
    parent = key;
  }
  for (auto it = path.rbegin(); it != path.rend(); ++it) touch(**it);
}

int64_t PrefixCache::take_checkpoint_slot() {
  if (!free_slots_.empty()) {
    const int64_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  // Reuse the checkpoint of the least recently used entry (pending ones are the newest).
  Entry* oldest = nullptr;
  for (auto& [key, e] : entries_)
    if (e.state_slot >= 0 && (!oldest || e.used < oldest->used)) oldest = &e;
  if (oldest) {
    const int64_t s = oldest->state_slot;
    oldest->state_slot = -1;
    return s;
  }
  if (!pending_slots_.empty()) {
    const auto it = pending_slots_.begin();
    const int64_t s = it->second;
    pending_slots_.erase(it);
    return s;
  }
  return -1;
}

void PrefixCache::checkpoint_saved(std::span<const int32_t> tokens, int64_t n_tokens, int64_t slot) {
  if (slot < 0) return;
  uint64_t key = 0;
  for (int64_t i = 0; i < n_tokens / block_size_; ++i)
    key = chain(key, tokens.subspan(static_cast<size_t>(i * block_size_), static_cast<size_t>(block_size_)));
  auto give_back = [&](int64_t s) { free_slots_.push_back(s); };
  if (auto it = entries_.find(key); it != entries_.end() && n_tokens > 0) {
    if (it->second.state_slot >= 0) return give_back(slot);
    it->second.state_slot = slot;
  } else {
    if (auto p = pending_slots_.find(key); p != pending_slots_.end()) give_back(p->second);
    pending_slots_[key] = slot;
  }
}

void PrefixCache::evict(uint64_t key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.state_slot >= 0) {
    free_slots_.push_back(it->second.state_slot);
  }
  kv_.release(it->second.block);
  entries_.erase(it);
}

int64_t PrefixCache::evictable() const {
  int64_t n = 0;
  for (const auto& [key, e] : entries_) n += kv_.refs(e.block) == 1 ? 1 : 0;
  return n;
}

int64_t PrefixCache::make_room(int64_t need) {
  if (kv_.free_blocks() >= need) return kv_.free_blocks();
  std::vector<std::pair<uint64_t, uint64_t>> order;  // (used, key) of blocks only the cache holds
  for (const auto& [key, e] : entries_)
    if (kv_.refs(e.block) == 1) order.emplace_back(e.used, key);
  std::sort(order.begin(), order.end());
  for (const auto& [used, key] : order) {
    if (kv_.free_blocks() >= need) break;
    evict(key);
  }
  return kv_.free_blocks();
}

void PrefixCache::clear() {
  std::vector<uint64_t> keys;
  keys.reserve(entries_.size());
  for (const auto& [key, e] : entries_) keys.push_back(key);
  for (uint64_t k : keys) evict(k);
  for (const auto& [key, s] : pending_slots_) free_slots_.push_back(s);
  pending_slots_.clear();
}

}  // namespace sy::serving
