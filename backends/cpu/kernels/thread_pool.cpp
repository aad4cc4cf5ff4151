#include "thread_pool.hpp"

namespace sy::cpu {

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
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    work(index);
    {
      std::lock_guard lock(mutex_);
      if (--busy_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::run(int64_t n_tasks, TaskFn fn) {
  if (n_tasks <= 0) return;
  if (workers_.empty() || n_tasks == 1) {
    for (int64_t t = 0; t < n_tasks; ++t) fn(t, 0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    fn_ = &fn;
    n_tasks_ = n_tasks;
    next_.store(0, std::memory_order_relaxed);
    busy_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  work(0);
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return busy_ == 0; });
  fn_ = nullptr;
}

}  // namespace sy::cpu
