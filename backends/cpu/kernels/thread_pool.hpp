// A persistent pool of worker threads. run() splits work into tasks that threads claim
// from one atomic counter (cheap load balancing, no per-task allocation); the calling
// thread works too. Per-thread state lives on separate cache lines.
//
// A decode step runs hundreds of short parallel regions with a little serial work between
// them. Three things keep that cheap:
// - a worker that has not yet woken up when the caller has claimed every task is not
//   waited for (it skips that region), so a region never costs more than its work plus the
//   stragglers already inside it;
// - threads spin briefly (kSpin in thread_pool.cpp) before they block on a condition
//   variable, so back-to-back regions skip the futex round trip;
// - while a graph runs (a Hot scope), the gaps between regions are the graph's own serial
//   ops (a norm, a rope, a cache write: microseconds), and a worker that blocked in every
//   gap would be woken through the kernel for nearly every matmul; then workers spin
//   longer (kHotSpin), unless the spin finds another thread taking the core (a busy
//   machine), where a plain 100 us spin cost about 30% of decode speed.
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

  /// While one exists, regions are expected back to back (a graph is running): idle
  /// threads spin longer before they block. Scopes nest; the caller's thread owns them.
  class Hot {
   public:
    explicit Hot(ThreadPool& pool) : pool_(pool) { pool_.hot_.fetch_add(1, std::memory_order_relaxed); }
    ~Hot() { pool_.hot_.fetch_sub(1, std::memory_order_relaxed); }
    Hot(const Hot&) = delete;
    Hot& operator=(const Hot&) = delete;

   private:
    ThreadPool& pool_;
  };

 private:
  void worker(int index);
  void work(int thread);
  /// Spins until done() holds or the spin's time is up (longer while Hot and no other thread
  /// was seen taking this core); true if it holds.
  template <class F>
  bool spin_until(F&& done);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_cv_;
  const TaskFn* fn_ = nullptr;
  int64_t n_tasks_ = 0;
  // The handshakes below are Dekker-style (a flag written, the other side's flag read), so
  // they use sequentially consistent operations; the mutex only guards the sleeping.
  // gate_: the region's generation (high 32 bits), whether it is closed to late workers
  // (kClosed) and how many workers are inside it (low bits).
  std::atomic<uint64_t> gate_{0};
  std::atomic<int> sleepers_{0};  ///< workers blocked (or about to block) on wake_
  std::atomic<bool> stop_{false};
  std::atomic<bool> caller_asleep_{false};  ///< run() is blocked on done_cv_
  std::atomic<int> hot_{0};                 ///< open Hot scopes
  std::atomic<int64_t> calm_until_{0};      ///< steady-clock ns: no hot spin before (busy machine)
  alignas(64) std::atomic<int64_t> next_{0};
};

}  // namespace sy::cpu
