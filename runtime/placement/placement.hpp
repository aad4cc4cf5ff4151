// Which device each tensor lives on. Rules, strongest first:
//   1. overrides: "REGEX=DEVICE", the first pattern that matches the tensor name wins
//      (llama.cpp -ot);
//   2. the token embeddings stay in RAM (a row lookup per token needs no GPU);
//   3. cpu_moe N: the routed experts of layers 0..N-1 stay in RAM (llama.cpp --n-cpu-moe);
//   4. gpu_layers N: the last N layers go to the GPU(s), split in proportion to their
//      budgets; the output head counts as one more layer after the last, so it moves to the
//      GPU only with all of them (llama.cpp -ngl semantics).
// Auto-fit searches cpu_moe upward (experts to RAM first), then gpu_layers downward, until
// every device fits its budget less the headroom.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "planner/planner.hpp"
#include "switchyard/status.hpp"

namespace sy::placement {

struct Choice {
  int64_t gpu_layers = 0;  ///< resolved count (n_layer + 1 means every layer and the output)
  int64_t cpu_moe = 0;
};

struct Placed {
  planner::Assignment assignment;
  std::vector<std::string> reason;  ///< per tensor: the rule that placed it
  Choice choice;
};

/// Places every tensor by the rules above. An override naming a device that is not in
/// `devices` is an error naming the rule and the devices there are.
Result<Placed> place(const planner::ModelDesc& m, const std::vector<planner::DeviceSpec>& devices,
                     const std::vector<pipeline::OverrideRule>& overrides, Choice c);

struct Fit {
  Placed placed;
  std::vector<planner::DeviceUsage> usage;
  bool fits = false;
  bool automatic_gpu_layers = false, automatic_cpu_moe = false;
};

/// Resolves `config` (gpu_layers/cpu_moe counts, "all", or automatic) for the request.
/// cpu_moe_auto: search cpu_moe (from config.cpu_moe upward) as well. When nothing fits,
/// returns the smallest-footprint placement tried with fits = false.
Result<Fit> fit(const planner::ModelDesc& m, const std::vector<planner::DeviceSpec>& devices,
                const pipeline::PlacementConfig& config, bool cpu_moe_auto, const planner::Request& r);

/// Memory kept free on a device: max(headroom, min_headroom), each a fraction of the
/// budget or a size.
uint64_t headroom_bytes(const pipeline::PlacementConfig& config, uint64_t budget);
/// The budget less the headroom.
uint64_t usable_bytes(const pipeline::PlacementConfig& config, uint64_t budget);

/// Whether usage fits every device's usable memory under the config's headroom.
bool fits(const std::vector<planner::DeviceUsage>& usage, const std::vector<planner::DeviceSpec>& devices,
          const pipeline::PlacementConfig& config);

}  // namespace sy::placement
