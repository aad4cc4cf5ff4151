#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace sy::bench {

Summary summarize(std::span<const double> xs) {
  Summary s;
  s.n = static_cast<int>(xs.size());
  if (xs.empty()) return s;
  double sum = 0;
  for (double x : xs) sum += x;
  s.mean = sum / static_cast<double>(xs.size());
  if (xs.size() > 1) {
    double sq = 0;
    for (double x : xs) sq += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(sq / static_cast<double>(xs.size() - 1));
  }
  std::vector<double> v(xs.begin(), xs.end());
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t h = v.size() / 2;
  s.median = v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
  return s;
}

}  // namespace sy::bench
