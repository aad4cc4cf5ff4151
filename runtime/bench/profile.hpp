// `switchyard bench --profile`: one prefill and one decode step with every node timed
// (graph::OpProfile), reported as markdown tables or JSON. Profiling waits for the device
// after each node, so the profiled step is slower than a normal one; the unprofiled wall
// time of the same step, measured just before, is reported beside it for comparison.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine.hpp"
#include "graph/profile.hpp"

namespace sy::bench {

struct StepProfiles {
  graph::OpProfile prefill, decode;
  int64_t prefill_tokens = 0;
  double prefill_ms = 0, decode_ms = 0;              ///< wall time of the profiled steps
  double prefill_plain_ms = 0, decode_plain_ms = 0;  ///< the same steps unprofiled, run just before
};

/// One prefill of `prompt_tokens` deterministic token ids into a fresh sequence, then one
/// decode step: once to warm up (page faults, arena growth; not reported), once unprofiled
/// (timed whole), then once profiled per node. The
/// sequence is removed afterwards, so the engine's cache is as it was. The engine must
/// have a free sequence slot and room for prompt_tokens + 1 positions.
Result<StepProfiles> profile_steps(engine::Engine& eng, int64_t prompt_tokens);

/// Two tables (prefill, decode), rows sorted by time, descending: op, type, device, nodes,
/// ms, % of step, GB/s (weight bytes / time where known), GFLOP/s (matmuls).
std::string profile_markdown(const StepProfiles& p);

/// {"prefill": {...}, "decode": {...}} with the same rows and the step totals.
nlohmann::ordered_json profile_json(const StepProfiles& p);

}  // namespace sy::bench
