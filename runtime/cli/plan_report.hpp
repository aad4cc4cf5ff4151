// What `switchyard plan` reports: the placement chosen for a request, each device's bytes,
// the longest context, decode ceilings, warnings and why each group of tensors went
// where; and its two renderings, a table for people and JSON for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convert/plan.hpp"
#include "placement/placement.hpp"

namespace sy::cli {

struct PlanReport {
  struct Group {
    std::string device, reason;
    size_t tensors = 0;
    uint64_t bytes = 0;
  };
  const planner::ModelDesc& model;
  std::vector<planner::DeviceSpec> devices;
  pipeline::PlacementConfig config;
  planner::Request request;
  std::string kv_name;
  placement::Fit fit;
  int64_t max_context = 0;           ///< with the chosen placement
  int64_t max_context_refitted = 0;  ///< with whatever placement auto-fit would choose for it
  uint64_t kv_per_token = 0, kv_total = 0, state_per_sequence = 0, weights = 0;
  double tps_empty = 0, tps_full = 0, tps_parallel = 0;
  uint64_t cpu_repacked = 0;  ///< bytes this machine's CPU rearranges at load (model::repacks_on_host)
  convert::Plan conversions;  ///< how each device computes each type placed there (convert/plan.hpp)
  std::vector<std::string> unplanned;  ///< devices whose conversions could not be planned, and why
  std::vector<std::string> warnings;
  std::vector<Group> groups;
};

/// Fits `m` on `devices` for `r` and gathers the figures. notes start the warnings.
Result<PlanReport> make_plan_report(const planner::ModelDesc& m, const std::vector<planner::DeviceSpec>& devs,
                                    const pipeline::PlacementConfig& cfg, bool moe_auto, const planner::Request& r,
                                    const std::string& kv_name, const std::vector<std::string>& notes);
/// The table, with the tensor groups when explain.
void print_plan(const PlanReport& rep, bool explain);
/// The JSON form (docs/tuning.md lists its fields).
nlohmann::json plan_json(const PlanReport& rep, bool explain);

}  // namespace sy::cli
