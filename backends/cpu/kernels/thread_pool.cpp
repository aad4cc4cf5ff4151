#include "thread_pool.hpp"

#include <sched.h>

#include <chrono>

namespace sy::cpu {
namespace {

// Long enough for the next region of a run of back-to-back ones (projections issued one
// after another), short enough that a spinning thread never takes the CPU from real work
// for long on a busy machine (see thread_pool.hpp).
constexpr auto kSpin = std::chrono::microseconds(5);
// Inside a Hot scope: longer than the serial gaps of a decode step, so workers rarely
// block inside a graph. Measured on qwen3-8b Q4_K_M decode, 2 threads, idle machine: 8.1
// t/s with kSpin alone, 9.0 with the hot spin.
constexpr auto kHotSpin = std::chrono::microseconds(200);
// A busy machine is recognised from the spin itself: past kSpin the spinner yields every
// kYieldEvery, and a yield (or any stretch between two clock reads) that takes longer than
// kPreempted means another thread ran on this core. Then the hot spin is off for kCalm:
// there a spinning worker only burns the CPU time the scheduler would otherwise give it
// back when work arrives. Measured with two busy processes on this 2-core machine: 4.2-4.4
// t/s with the short spin alone, 3.0-3.5 with a hot spin that only yielded, and the same
// as the short spin (medians 4.1 and 4.0 of six) with this detection.
constexpr auto kYieldEvery = std::chrono::microseconds(10);
constexpr auto kPreempted = std::chrono::microseconds(50);
constexpr auto kCalm = std::chrono::milliseconds(100);

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr uint64_t kClosed = uint64_t{1} << 31;
constexpr uint64_t kInside = kClosed - 1;  // mask of the count of workers inside

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

template <class F>
bool ThreadPool::spin_until(F&& done) {
  using std::chrono::nanoseconds;
  const int64_t start = now_ns();
  const bool hot = hot_.load(std::memory_order_relaxed) > 0 && start >= calm_until_.load(std::memory_order_relaxed);
  const int64_t limit = start + nanoseconds(hot ? kHotSpin : kSpin).count();
  int64_t last = start, next_yield = start + nanoseconds(kSpin).count();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    const int64_t now = now_ns();
    if (now - last > nanoseconds(kPreempted).count()) {
      calm_until_.store(now + nanoseconds(kCalm).count(), std::memory_order_relaxed);
      return done();
    }
    if (now >= limit) return done();
    if (now >= next_yield) {
      sched_yield();
      next_yield = now + nanoseconds(kYieldEvery).count();
    }
    last = now;
  }
}

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::work(int thread) {
  for (int64_t t = next_.fetch_add(1, std::memory_order_relaxed); t < n_tasks_;
       t = next_.fetch_add(1, std::memory_order_relaxed))
    (*fn_)(t, thread);
}

void ThreadPool::worker(int index) {
  uint64_t seen = 0;  // the last generation this worker joined or skipped
  for (;;) {
    const auto fresh = [&] { return stop_.load() || gate_.load() >> 32 != seen; };
    if (!spin_until(fresh)) {
      std::unique_lock lock(mutex_);
      // Counted before the predicate is checked: run() opens the region and then reads
      // sleepers_, so either it sees this worker asleep and notifies, or the check below
      // already sees the new region.
      sleepers_.fetch_add(1);
      wake_.wait(lock, fresh);
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    uint64_t g = gate_.load();
    seen = g >> 32;
    // Join unless the caller already closed the region (every task claimed): then there
    // is nothing to do and nobody waits for this worker.
    while ((g & kClosed) == 0 && g >> 32 == seen) {
      if (!gate_.compare_exchange_weak(g, g + 1)) continue;
      work(index);
      const uint64_t left = gate_.fetch_sub(1) - 1;
      if ((left & kInside) == 0 && (left & kClosed) != 0 && caller_asleep_.load()) {
        std::lock_guard lock(mutex_);
        done_cv_.notify_one();
      }
      break;
    }
  }
}

void ThreadPool::run(int64_t n_tasks, TaskFn fn) {
  if (n_tasks <= 0) return;
  if (workers_.empty() || n_tasks == 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t, 0);
    return;
  }
  // Workers read these only after they joined the new region through gate_ (sequentially
  // consistent, so also an acquire of these plain writes), and no worker is inside the
  // previous one any more.
  fn_ = &fn;
  n_tasks_ = n_tasks;
  next_.store(0, std::memory_order_relaxed);
  const uint64_t generation = (gate_.load() >> 32) + 1;
  gate_.store(generation << 32);
  if (sleepers_.load() > 0) {
    std::lock_guard lock(mutex_);  // a worker between its count and its wait holds the lock
    wake_.notify_all();
  }
  work(0);
  // Every task is claimed now; close the region and wait only for the workers inside it.
  gate_.fetch_or(kClosed);
  const auto done = [&] { return (gate_.load() & kInside) == 0; };
  if (!spin_until(done)) {
    std::unique_lock lock(mutex_);
    caller_asleep_.store(true);
    done_cv_.wait(lock, done);
    caller_asleep_.store(false);
  }
  fn_ = nullptr;
}

}  // namespace sy::cpu
