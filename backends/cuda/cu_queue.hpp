// The device's one stream and everything ordered on it: kernel launches, copies to and from
// the host through pinned staging memory, and events. Work is queued without waiting; an
// event is a number whose cudaEvent_t completes after everything queued before it. A copy
// to the host lands in pinned memory first and reaches the caller's memory when a wait
// covers it (the caller may not read it earlier, per the device contract).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "host/staging_ring.hpp"
#include "switchyard/status.hpp"

namespace sy::cuda {

std::string why(cudaError_t e);

class Queue {
 public:
  /// A queue on device `ordinal` with `staging_bytes` of pinned staging memory.
  static Result<std::unique_ptr<Queue>> create(int ordinal, size_t staging_bytes);
  ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  [[nodiscard]] int ordinal() const { return ordinal_; }
  /// Makes this queue's device current on the calling thread (CUDA's current device is per thread).
  Status bind() const;

  /// Copies `src` into device memory at `dst`; `src` may be reused when this returns.
  Status copy_to_device(void* dst, std::span<const std::byte> src);
  /// Copies device memory at `src` into `dst`, which is filled once a wait covers the copy.
  Status copy_to_host(const void* src, std::span<std::byte> dst);
  /// The queue's lock, for a caller that queues several things that must stay together (the
  /// executor holds it for a whole sub-graph, stream capture included); the *_locked calls
  /// and check() expect it held.
  [[nodiscard]] std::unique_lock<std::mutex> hold() { return std::unique_lock(mu_); }
  /// Copies `bytes` at `src` through the staging ring into device memory at `dst`.
  Status upload_locked(void* dst, const void* src, size_t bytes);
  /// Work was queued on stream() directly (kernel or graph launches): the next event covers it.
  void mark_dirty_locked() { dirty_ = true; }

  /// A number completing after everything queued so far (0: nothing was ever queued).
  Result<uint64_t> record_event();
  /// Waits for `event` and finishes the host copies queued before it.
  Status wait(uint64_t event);
  /// Waits for everything queued.
  Status synchronize();
  /// A failed CUDA call as a Status; it breaks the queue for good (call with hold() held).
  Status check(cudaError_t e, const char* what);

 private:
  struct HostCopy {
    uint64_t event;  ///< completes after the device-to-pinned copy
    const std::byte* from;
    std::byte* to;
    size_t n;
  };
  Queue(int ordinal, size_t staging_bytes) : ordinal_(ordinal), ring_(staging_bytes) {}
  Result<std::byte*> staged_bytes(size_t n);  // waits for older events while the ring is full
  Result<uint64_t> record_locked();
  Status wait_locked(uint64_t event);
  void finish_host_copies(uint64_t completed);

  int ordinal_;
  cudaStream_t stream_ = nullptr;
  std::byte* pinned_ = nullptr;
  StagingRing ring_;
  std::mutex mu_;
  std::deque<std::pair<uint64_t, cudaEvent_t>> events_;  ///< recorded, not yet known complete
  std::vector<cudaEvent_t> free_events_;
  std::vector<HostCopy> host_copies_;
  uint64_t recorded_ = 0, completed_ = 0;
  bool dirty_ = false;  ///< something was queued since the last event
  cudaError_t lost_ = cudaSuccess;
};

}  // namespace sy::cuda
