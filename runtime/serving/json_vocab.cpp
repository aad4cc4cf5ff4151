#include "serving/json_vocab.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace sy::serving {

namespace {

// Whether the bytes, read inside a string, stay inside it whatever string that is: string
// contents read the same in keys and values at any depth, and a top-level string that closed
// could not reopen, so ending in_string_text() means it never closed.
bool plain_string_text(std::string_view bytes) {
  JsonPrefix p(JsonTop::any);
  p.push('"');
  return p.push(bytes) && p.in_string_text();
}

}  // namespace

JsonVocab::JsonVocab(std::span<const std::string> pieces, std::span<const uint8_t> is_special,
                     std::span<const int32_t> end_ids)
    : size_(pieces.size()) {
  for (int32_t id : end_ids)
    if (id >= 0 && static_cast<size_t>(id) < size_) end_ids_.push_back(id);
  std::sort(end_ids_.begin(), end_ids_.end());
  end_ids_.erase(std::unique(end_ids_.begin(), end_ids_.end()), end_ids_.end());

  // Counting sort into 512 buckets: first byte, then plain string text before the rest.
  std::vector<uint16_t> bucket(size_, 0);
  std::array<uint32_t, 513> count{};
  slot_.assign(size_, -1);
  for (size_t id = 0; id < size_; ++id) {
    const std::string& p = pieces[id];
    if (is_end(static_cast<int32_t>(id))) continue;
    if (p.empty() || (id < is_special.size() && is_special[id] != 0)) {
      blocked_.push_back(static_cast<int32_t>(id));
      continue;
    }
    slot_[id] = 0;  // a text token; its index is known once the buckets are laid out
    bucket[id] = static_cast<uint16_t>(2 * static_cast<uint8_t>(p[0]) + (plain_string_text(p) ? 0 : 1));
    ++count[bucket[id] + 1];
  }
  for (size_t b = 1; b < count.size(); ++b) count[b] += count[b - 1];
  for (size_t b = 0; b < 256; ++b) {
    group_[b] = count[2 * b];
    plain_end_[b] = count[2 * b + 1];
  }
  group_[256] = count[512];

  ids_.resize(group_[256]);
  std::array<uint32_t, 512> next{};
  std::copy(count.begin(), count.begin() + 512, next.begin());
  for (size_t id = 0; id < size_; ++id)
    if (slot_[id] == 0) ids_[next[bucket[id]]++] = static_cast<int32_t>(id);
  start_.reserve(ids_.size() + 1);
  for (size_t i = 0; i < ids_.size(); ++i) {
    slot_[ids_[i]] = static_cast<int32_t>(i);
    start_.push_back(static_cast<uint32_t>(bytes_.size()));
    bytes_ += pieces[ids_[i]];
  }
  start_.push_back(static_cast<uint32_t>(bytes_.size()));
}

bool JsonVocab::is_end(int32_t id) const { return std::binary_search(end_ids_.begin(), end_ids_.end(), id); }

void JsonVocab::mask(const JsonPrefix& state, std::span<float> logits) const {
  const size_t n = logits.size();
  auto block = [&](int32_t id) {
    if (static_cast<size_t>(id) < n) logits[id] = -INFINITY;
  };
  for (int32_t id : blocked_) block(id);
  for (size_t id = size_; id < n; ++id) logits[id] = -INFINITY;
  if (!state.complete())
    for (int32_t id : end_ids_) block(id);
  // Once the top-level value is closed only an end token may come: trailing whitespace is
  // valid JSON but would only delay the end.
  if (state.closed() || state.failed()) {
    for (int32_t id : ids_) block(id);
    return;
  }
  const std::string_view all(bytes_);
  for (size_t b = 0; b < 256; ++b) {
    const uint32_t lo = group_[b], hi = group_[b + 1];
    if (lo == hi) continue;
    JsonPrefix after = state;
    if (!after.push(static_cast<uint8_t>(b))) {
      for (uint32_t i = lo; i < hi; ++i) block(ids_[i]);
      continue;
    }
    const uint32_t first = state.in_string_text() ? plain_end_[b] : lo;
    for (uint32_t i = first; i < hi; ++i) {
      JsonPrefix s = after;
      if (!s.push(all.substr(start_[i] + 1, start_[i + 1] - start_[i] - 1))) block(ids_[i]);
    }
  }
}

bool JsonVocab::append(JsonPrefix& state, int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= size_) return false;
  if (is_end(id)) return state.complete();
  const int32_t i = slot_[id];
  if (i < 0 || state.closed()) return false;
  JsonPrefix next = state;
  if (!next.push(std::string_view(bytes_).substr(start_[i], start_[i + 1] - start_[i]))) return false;
  state = next;
  return true;
}

}  // namespace sy::serving
