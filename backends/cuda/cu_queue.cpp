#include "cu_queue.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace sy::cuda {

std::string why(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

Result<std::unique_ptr<Queue>> Queue::create(int ordinal, size_t staging_bytes) {
  std::unique_ptr<Queue> q(new Queue(ordinal, staging_bytes));
  if (auto e = cudaSetDevice(ordinal)) return error::unavailable("cuda" + std::to_string(ordinal) + ": " + why(e));
  // Non-blocking: the legacy default stream, which cudaMemcpy and other libraries use, must
  // not serialise against this one.
  if (auto e = cudaStreamCreateWithFlags(&q->stream_, cudaStreamNonBlocking))
    return error::unavailable("cuda: cannot create a stream (" + why(e) + ")");
  void* p = nullptr;
  if (auto e = cudaMallocHost(&p, staging_bytes))
    return error::out_of_memory("cuda: cannot pin " + std::to_string(staging_bytes) + " bytes of staging memory (" + why(e) + ")");
  q->pinned_ = static_cast<std::byte*>(p);
  return q;
}

Queue::~Queue() {
  cudaSetDevice(ordinal_);
  if (stream_) cudaStreamSynchronize(stream_);
  for (auto& [v, ev] : events_) cudaEventDestroy(ev);
  for (auto ev : free_events_) cudaEventDestroy(ev);
  if (pinned_) cudaFreeHost(pinned_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status Queue::bind() const {
  if (auto e = cudaSetDevice(ordinal_)) return error::unavailable("cuda" + std::to_string(ordinal_) + ": " + why(e));
  return Status::ok();
}

Status Queue::check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  // Launch and copy failures leave the stream's order unknown: the device refuses further
  // work with this error rather than compute on top of it.
  if (lost_ == cudaSuccess) lost_ = e;
  return error::io_error(std::string("cuda: ") + what + " failed (" + why(e) + ")");
}

Result<std::byte*> Queue::staged_bytes(size_t n) {
  if (!ring_.fits(n)) return error::internal("cuda: a staged copy of " + std::to_string(n) + " bytes exceeds the staging ring");
  for (;;) {
    if (auto off = ring_.acquire(n)) return pinned_ + *off;
    uint64_t oldest = ring_.oldest_event();
    if (oldest == 0) {  // only untagged bytes in flight: an event covers them from now on
      dirty_ = true;     // their copies were queued, whatever the flag says
      auto ev = record_locked();
      if (!ev) return ev.status();
      oldest = ev.value();
    }
    if (auto st = wait_locked(oldest); !st) return st;
  }
}

Status Queue::copy_to_device(void* dst, std::span<const std::byte> src) {
  std::lock_guard lock(mu_);
  if (lost_) return check(lost_, "an earlier operation");
  const size_t chunk = ring_.capacity() / 4;
  for (size_t off = 0; off < src.size(); off += chunk) {
    const size_t n = std::min(chunk, src.size() - off);
    auto p = staged_bytes(n);
    if (!p) return p.status();
    std::memcpy(p.value(), src.data() + off, n);
    if (auto st = check(cudaMemcpyAsync(static_cast<std::byte*>(dst) + off, p.value(), n, cudaMemcpyHostToDevice, stream_),
                        "a copy to the device");
        !st)
      return st;
    dirty_ = true;
  }
  return Status::ok();
}

Status Queue::copy_to_host(const void* src, std::span<std::byte> dst) {
  std::lock_guard lock(mu_);
  if (lost_) return check(lost_, "an earlier operation");
  const size_t chunk = ring_.capacity() / 4;
  for (size_t off = 0; off < dst.size(); off += chunk) {
    const size_t n = std::min(chunk, dst.size() - off);
    auto p = staged_bytes(n);
    if (!p) return p.status();
    if (auto st = check(cudaMemcpyAsync(p.value(), static_cast<const std::byte*>(src) + off, n, cudaMemcpyDeviceToHost, stream_),
                        "a copy to the host");
        !st)
      return st;
    dirty_ = true;
    auto ev = record_locked();  // the pinned bytes are final once this completes
    if (!ev) return ev.status();
    host_copies_.push_back({ev.value(), p.value(), dst.data() + off, n});
  }
  return Status::ok();
}

Status Queue::upload_locked(void* dst, const void* src, size_t bytes) {
  if (lost_) return check(lost_, "an earlier operation");
  auto p = staged_bytes(bytes);
  if (!p) return p.status();
  std::memcpy(p.value(), src, bytes);
  dirty_ = true;
  return check(cudaMemcpyAsync(dst, p.value(), bytes, cudaMemcpyHostToDevice, stream_), "staging node records");
}

Result<uint64_t> Queue::record_event() {
  std::lock_guard lock(mu_);
  return record_locked();
}

Result<uint64_t> Queue::record_locked() {
  if (lost_) return check(lost_, "an earlier operation");
  if (!dirty_) return recorded_;  // nothing new: the last event already covers everything
  cudaEvent_t ev = nullptr;
  if (!free_events_.empty()) {
    ev = free_events_.back();
    free_events_.pop_back();
  } else if (auto st = check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "creating an event"); !st) {
    return st;
  }
  if (auto st = check(cudaEventRecord(ev, stream_), "recording an event"); !st) {
    cudaEventDestroy(ev);
    return st;
  }
  events_.emplace_back(++recorded_, ev);
  ring_.tag(recorded_);
  dirty_ = false;
  return recorded_;
}

Status Queue::wait(uint64_t event) {
  std::lock_guard lock(mu_);
  return wait_locked(event);
}

Status Queue::wait_locked(uint64_t event) {
  if (lost_) return check(lost_, "an earlier operation");
  if (event > recorded_) return error::invalid_argument("cuda: wait for event " + std::to_string(event) + ", which was never recorded");
  while (!events_.empty() && events_.front().first <= event) {
    if (auto st = check(cudaEventSynchronize(events_.front().second), "waiting for the device"); !st) return st;
    completed_ = events_.front().first;
    free_events_.push_back(events_.front().second);
    events_.pop_front();
  }
  finish_host_copies(completed_);
  ring_.retire(completed_);  // after the host copies: they read the pinned bytes
  return Status::ok();
}

void Queue::finish_host_copies(uint64_t completed) {
  auto done = [&](const HostCopy& c) { return c.event <= completed; };
  for (const auto& c : host_copies_)
    if (done(c)) std::memcpy(c.to, c.from, c.n);
  host_copies_.erase(std::remove_if(host_copies_.begin(), host_copies_.end(), done), host_copies_.end());
}

Status Queue::synchronize() {
  std::lock_guard lock(mu_);
  auto ev = record_locked();
  if (!ev) return ev.status();
  return wait_locked(ev.value());
}

}  // namespace sy::cuda
