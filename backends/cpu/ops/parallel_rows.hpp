// Spreading an op's rows over the pool. Each row is computed whole by one thread with the
// same arithmetic as on one thread, so results never depend on the thread count. Whether
// to use the pool is decided by the work, not by timing: waking the threads costs a few
// microseconds, so a decode step's single rows of a few thousand elements stay on the
// calling thread, while a prefill's hundreds of rows are split.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "thread_pool.hpp"
#include "view.hpp"

namespace sy::cpu {

/// Work (about one multiply-add per unit) below which the pool is not used.
inline constexpr int64_t kParallelMinWork = 1 << 15;

/// How many threads run `rows` rows of `row_work` each: 1 without a pool or below the
/// threshold. Callers size per-thread scratch with it before calling for_rows().
inline int row_threads(const ThreadPool* pool, int64_t rows, int64_t row_work) {
  if (!pool || pool->size() < 2 || rows < 2 || rows * row_work < kParallelMinWork) return 1;
  return pool->size();
}

/// `pool`, or nullptr when threads could race through memory: an input that partially
/// overlaps the output y (one thread's rows overwrite what another thread's rows read). An
/// input laid out exactly as y (in place) is safe, since each row reads only itself; so are
/// disjoint ones. On one thread, rows run in order, as they always did.
inline ThreadPool* pool_for_rows(ThreadPool* pool, const View& y, std::initializer_list<View> inputs) {
  const auto extent = [](const View& v) {
    int64_t last = 0;  // strides are never negative here; a broadcast dimension has size 1
    for (int d = 0; d < 4; ++d) last += (v.ne[d] - 1) * v.st[d];
    return std::pair<const float*, const float*>{v.data, v.data + last + 1};
  };
  const auto [ylo, yhi] = extent(y);
  for (const View& x : inputs) {
    bool same_layout = x.data == y.data;
    for (int d = 0; d < 4; ++d) same_layout = same_layout && x.ne[d] == y.ne[d] && (x.ne[d] == 1 || x.st[d] == y.st[d]);
    if (same_layout) continue;
    const auto [xlo, xhi] = extent(x);
    if (xlo < yhi && ylo < xhi) return nullptr;
  }
  return pool;
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
