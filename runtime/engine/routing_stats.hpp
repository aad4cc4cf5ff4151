// How evenly a MoE model's router spreads tokens over its experts: the check that a
// synthetic model routes like a trained one (a collapsed router makes prefill look cheap).
#pragma once

#include <cstdint>
#include <vector>

namespace sy::engine {

struct RoutingLayer {
  int64_t experts_chosen = 0;  ///< experts picked at least once
  uint64_t min = 0, max = 0;   ///< picks of the least and the most used expert
  double max_over_mean = 0;    ///< busiest expert against the mean picks per expert
};

struct RoutingSummary {
  std::vector<RoutingLayer> layers;
  int64_t experts = 0;
  uint64_t picks_per_layer = 0;       ///< tokens x experts used
  int64_t fewest_experts_chosen = 0;  ///< over layers
  double worst_max_over_mean = 0;     ///< over layers
  int64_t worst_layer = -1;
};

/// Summarises Engine::routing_counts().
RoutingSummary summarize_routing(const std::vector<std::vector<uint64_t>>& counts);

}  // namespace sy::engine
