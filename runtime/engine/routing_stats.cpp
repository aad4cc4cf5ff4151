#include "engine/routing_stats.hpp"

#include <algorithm>
#include <numeric>

namespace sy::engine {

RoutingSummary summarize_routing(const std::vector<std::vector<uint64_t>>& counts) {
  RoutingSummary s;
  s.fewest_experts_chosen = counts.empty() ? 0 : static_cast<int64_t>(counts[0].size());
  for (size_t l = 0; l < counts.size(); ++l) {
    const auto& c = counts[l];
    RoutingLayer r;
    const uint64_t total = std::accumulate(c.begin(), c.end(), uint64_t{0});
    r.experts_chosen = std::count_if(c.begin(), c.end(), [](uint64_t v) { return v > 0; });
    if (!c.empty()) {
      r.min = *std::min_element(c.begin(), c.end());
      r.max = *std::max_element(c.begin(), c.end());
    }
    const double mean = c.empty() ? 0.0 : static_cast<double>(total) / static_cast<double>(c.size());
    r.max_over_mean = mean > 0 ? static_cast<double>(r.max) / mean : 0.0;
    s.experts = static_cast<int64_t>(c.size());
    s.picks_per_layer = total;
    s.fewest_experts_chosen = std::min(s.fewest_experts_chosen, r.experts_chosen);
    if (r.max_over_mean > s.worst_max_over_mean) s.worst_max_over_mean = r.max_over_mean, s.worst_layer = static_cast<int64_t>(l);
    s.layers.push_back(r);
  }
  return s;
}

}  // namespace sy::engine
