// `switchyard synth`: a GGUF with deterministic random weights for a topology, in a type
// mix, with a tokenizer. Tensors are streamed to disk one at a time, so a 20 GB model
// needs about one expert tensor of memory.
#pragma once

#include <filesystem>
#include <string>

#include "planner/model_desc.hpp"
#include "switchyard/status.hpp"
#include "synth/topology.hpp"

namespace sy::synth {

struct SynthOptions {
  std::string type = "q8_0";        ///< a type mix (parse_type_mix)
  uint64_t seed = 42;
  bool tokenizer = true;            ///< false: no tokenizer keys at all
  std::filesystem::path tokenizer_json;  ///< a real tokenizer; empty: a synthetic vocabulary
  int threads = 0;                  ///< 0: every hardware thread
};

/// Writes `t` to `path` (atomically: a failed write leaves no file and an existing one intact).
Status write_synth_model(const std::filesystem::path& path, const Topology& t, const SynthOptions& o);

/// What write_synth_model would write, for the planner: hyper-parameters read back from
/// the same metadata, every tensor with its type and size. Nothing is written.
Result<planner::ModelDesc> describe(const Topology& t, const std::string& type);

/// The built-in default model for the demo and for tests: topology "demo" (a scaled-down
/// Qwen3.6 hybrid) or "demo-llama", in `type`.
Status write_demo_model(const std::filesystem::path& path, const std::string& topology = "demo",
                        const std::string& type = "q8_0", bool tokenizer = true);

}  // namespace sy::synth
