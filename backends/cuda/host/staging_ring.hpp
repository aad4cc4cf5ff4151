// Pinned staging memory is handed out as a ring: a copy takes the next bytes, tagged with the
// event that completes after the copy's transfer; once that event completed the bytes are
// reused. No CUDA here, so the bookkeeping is tested on machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace sy::cuda {

class StagingRing {
 public:
  /// A ring over `capacity` bytes (the pinned slab the caller owns).
  explicit StagingRing(size_t capacity) : capacity_(capacity) {}

  /// The offset of `bytes` free bytes aligned to `align` (a power of two), or nullopt while
  /// too much is in flight: the caller then waits for oldest_event() and calls retire().
  /// A request larger than the ring never fits (fits() says so up front).
  std::optional<size_t> acquire(size_t bytes, size_t align = 256);
  /// Tags every byte acquired since the last tag with `event` (monotonic, > 0).
  void tag(uint64_t event);
  /// Frees the spans whose events are <= `completed`.
  void retire(uint64_t completed);
  /// The event the oldest span in flight waits for; 0 when nothing is in flight.
  [[nodiscard]] uint64_t oldest_event() const;

  [[nodiscard]] bool fits(size_t bytes, size_t align = 256) const { return bytes + align <= capacity_; }
  [[nodiscard]] size_t capacity() const { return capacity_; }
  [[nodiscard]] size_t in_flight() const { return used_; }

 private:
  struct Span {
    size_t begin, end;  ///< [begin, end) in ring offsets; end may wrap below begin
    size_t bytes;       ///< bytes it holds, padding included
    uint64_t event;     ///< 0: not tagged yet
  };
  size_t capacity_;
  size_t head_ = 0;  ///< next free offset
  size_t used_ = 0;
  std::deque<Span> spans_;
};

}  // namespace sy::cuda
