#include "thread_pool.hpp"

#include <chrono>

namespace sy::cpu {
namespace {

// Long enough to bridge the serial ops between two regions of a decode step (norms,
// routing: microseconds), short enough that a pool left idle stops taking CPU time almost
// at once.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() holds or kSpin passes; true if it holds.
template <class F>
bool spin_until(F&& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

}  // namespace

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
  uint64_t seen = 0;
  for (;;) {
    const auto started = [&] { return stop_.load() || generation_.load() != seen; };
    if (!spin_until(started)) {
      std::unique_lock lock(mutex_);
      // Counted before the predicate is checked: run() bumps the generation and then reads
      // sleepers_, so either it sees this worker asleep and notifies, or the check below
      // already sees the new generation.
      sleepers_.fetch_add(1);
      wake_.wait(lock, started);
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = generation_.load();
    work(index);
    if (pending_.fetch_sub(1) == 1 && caller_asleep_.load()) {
      std::lock_guard lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t n_tasks, TaskFn fn) {
  if (n_tasks <= 0) return;
  if (workers_.empty() || n_tasks == 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t, 0);
    return;
  }
  // Workers read these only after they see the new generation (sequentially consistent,
  // so also a release/acquire pair), and every worker has finished the previous one.
  fn_ = &fn;
  n_tasks_ = n_tasks;
  next_.store(0, std::memory_order_relaxed);
  pending_.store(static_cast<int>(workers_.size()));
  generation_.fetch_add(1);
  if (sleepers_.load() > 0) {
    std::lock_guard lock(mutex_);  // a worker between its count and its wait holds the lock
    wake_.notify_all();
  }
  work(0);
  const auto done = [&] { return pending_.load() == 0; };
  if (!spin_until(done)) {
    std::unique_lock lock(mutex_);
    caller_asleep_.store(true);
    done_cv_.wait(lock, done);
    caller_asleep_.store(false);
  }
  fn_ = nullptr;
}

}  // namespace sy::cpu
