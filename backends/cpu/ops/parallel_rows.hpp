// Spreading an op's rows over the pool. Each row is computed whole by one thread with the
// same arithmetic as on one thread, so results never depend on the thread count. Whether
// to use the pool is decided by the work, not by timing: waking the threads costs a few
// microseconds, so a decode step's single rows of a few thousand elements stay on the
// calling thread, while a prefill's hundreds of rows are split.
#pragma once

#include <algorithm>
#include <cstdint>

#include "thread_pool.hpp"

namespace sy::cpu {

/// Work (about one multiply-add per unit) below which the pool is not used.
inline constexpr int64_t kParallelMinWork = 1 << 15;

/// How many threads run `rows` rows of `row_work` each: 1 without a pool or below the
/// threshold. Callers size per-thread scratch with it before calling for_rows().
inline int row_threads(const ThreadPool* pool, int64_t rows, int64_t row_work) {
  if (!pool || pool->size() < 2 || rows < 2 || rows * row_work < kParallelMinWork) return 1;
  return pool->size();
}

/// Calls fn(r0, r1, thread) over consecutive ranges covering [0, rows).
template <class F>
void for_rows(ThreadPool* pool, int64_t rows, int64_t row_work, const F& fn) {
  const int threads = row_threads(pool, rows, row_work);
  if (threads == 1) {
    fn(int64_t{0}, rows, 0);
    return;
  }
  // A few ranges per thread balance uneven progress; each stays above the threshold's half.
  const int64_t by_work = std::max<int64_t>(1, rows * row_work / (kParallelMinWork / 2));
  const int64_t n_tasks = std::min({rows, by_work, int64_t{4} * threads});
  const int64_t per = (rows + n_tasks - 1) / n_tasks;
  pool->run((rows + per - 1) / per, [&](int64_t t, int thread) { fn(t * per, std::min(rows, (t + 1) * per), thread); });
}

}  // namespace sy::cpu
