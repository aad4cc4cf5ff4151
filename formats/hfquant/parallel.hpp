// Decoding a checkpoint is a load-time cost users wait for: the readers split their loops
// over the machine's cores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace sy::hfq {

/// fn(begin, end) over [0, n) in contiguous chunks, one per core (inline when n is small).
template <class F>
void parallel_for(int64_t n, F&& fn) {
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t parts = std::min(cores, n / 16);
  if (parts <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  std::vector<std::thread> ts;
  ts.reserve(static_cast<size_t>(parts - 1));
  for (int64_t p = 1; p < parts; ++p) ts.emplace_back([&, p] { fn(n * p / parts, n * (p + 1) / parts); });
  fn(int64_t{0}, n / parts);
  for (auto& t : ts) t.join();
}

}  // namespace sy::hfq
