// A persistent pool of worker threads. run() splits work into tasks that threads claim
// from one atomic counter (cheap load balancing, no per-task allocation); the calling
// thread works too. Per-thread state lives on separate cache lines.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sy::cpu {

class ThreadPool {
 public:
  /// `threads` including the caller (>= 1).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Number of threads, the caller included.
  [[nodiscard]] int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(task, thread) for every task in [0, n_tasks), spread over the threads, and
  /// returns when all are done. `thread` is in [0, size()). Not re-entrant.
  void run(int64_t n_tasks, const std::function<void(int64_t task, int thread)>& fn);

 private:
  void worker(int index);
  void work(int thread);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_cv_;
  const std::function<void(int64_t, int)>* fn_ = nullptr;
  int64_t n_tasks_ = 0;
  uint64_t generation_ = 0;
  int busy_ = 0;
  bool stop_ = false;
  alignas(64) std::atomic<int64_t> next_{0};
};

}  // namespace sy::cpu
