// What the planner needs to know about a model: its hyper-parameters and every tensor's
// name, shape, type and size. It comes from a model file's header (no weights are read)
// or from a synth topology (nothing is written).
#pragma once

#include <string>
#include <vector>

#include "model/hparams.hpp"
#include "switchyard/tensor.hpp"

namespace sy::planner {

struct ModelDesc {
  std::string name;  ///< for display: a file name or a topology with its type mix
  model::HParams hp;
  std::vector<TensorDesc> tensors;
};

/// Whether a tensor holds routed experts (what cpu_moe and auto-fit move to RAM first).
bool is_routed_expert(const std::string& name);

/// The block index in "blk.N.*", or -1 for a global tensor.
int64_t layer_of(const std::string& name);

}  // namespace sy::planner
