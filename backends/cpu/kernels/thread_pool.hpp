// A persistent pool of worker threads. run() splits work into tasks that threads claim
// from one atomic counter (cheap load balancing, no per-task allocation); the calling
// thread works too. Per-thread state lives on separate cache lines.
//
// A decode step runs hundreds of short parallel regions with a little serial work between
// them, so waking a thread through the kernel each time would cost about as much as the
// region itself. Workers and the caller therefore spin for a bounded time (kSpin) before
// they block on a condition variable; an idle pool still sleeps.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace sy::cpu {

/// A non-owning reference to a callable fn(task, thread): unlike std::function it never
/// allocates, which keeps steady-state decode free of heap traffic.
class TaskFn {
 public:
  template <class F>
  TaskFn(const F& f)  // NOLINT: implicit, so lambdas pass directly
      : obj_(&f), call_([](const void* o, int64_t task, int thread) { (*static_cast<const F*>(o))(task, thread); }) {}
  void operator()(int64_t task, int thread) const { call_(obj_, task, thread); }

 private:
  const void* obj_;
  void (*call_)(const void*, int64_t, int);
};

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
  void run(int64_t n_tasks, TaskFn fn);

 private:
  void worker(int index);
  void work(int thread);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_cv_;
  const TaskFn* fn_ = nullptr;
  int64_t n_tasks_ = 0;
  // The handshakes below are Dekker-style (a flag written, the other side's flag read), so
  // they use sequentially consistent operations; the mutex only guards the sleeping.
  std::atomic<uint64_t> generation_{0};  ///< bumped once per run(): workers start on a change
  std::atomic<int> sleepers_{0};         ///< workers blocked (or about to block) on wake_
  std::atomic<bool> stop_{false};
  alignas(64) std::atomic<int> pending_{0};  ///< workers not yet done with this generation
  std::atomic<bool> caller_asleep_{false};    ///< run() is blocked on done_cv_
  alignas(64) std::atomic<int64_t> next_{0};
};

}  // namespace sy::cpu
