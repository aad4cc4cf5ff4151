#include "host/staging_ring.hpp"

namespace sy::cuda {

std::optional<size_t> StagingRing::acquire(size_t bytes, size_t align) {
  if (bytes == 0) bytes = 1;
  if (!fits(bytes, align)) return std::nullopt;
  size_t start = (head_ + align - 1) & ~(align - 1);
  size_t pad = start - head_;
  if (start + bytes > capacity_) {  // does not fit before the end: skip to offset 0
    pad = capacity_ - head_;
    start = 0;
  }
  if (used_ + pad + bytes > capacity_) return std::nullopt;
  const size_t end = start + bytes;
  // An untagged span at the back grows instead of adding a new one: one tag covers them all.
  if (!spans_.empty() && spans_.back().event == 0) {
    spans_.back().end = end;
    spans_.back().bytes += pad + bytes;
  } else {
    spans_.push_back({head_, end, pad + bytes, 0});
  }
  used_ += pad + bytes;
  head_ = end == capacity_ ? 0 : end;
  return start;
}

void StagingRing::tag(uint64_t event) {
  if (!spans_.empty() && spans_.back().event == 0) spans_.back().event = event;
}

void StagingRing::retire(uint64_t completed) {
  while (!spans_.empty() && spans_.front().event != 0 && spans_.front().event <= completed) {
    used_ -= spans_.front().bytes;
    spans_.pop_front();
  }
  if (spans_.empty()) {
    head_ = 0;  // nothing in flight: start over at the front, where a large request fits
    used_ = 0;
  }
}

uint64_t StagingRing::oldest_event() const { return spans_.empty() ? 0 : spans_.front().event; }

}  // namespace sy::cuda
