// The tensors and metadata keys a topology becomes in GGUF, named and shaped as llama.cpp
// writes them, so the engine loads a synth file like a converted checkpoint.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "switchyard/metadata.hpp"
#include "synth/topology.hpp"

namespace sy::synth {

/// How a tensor's random values are drawn (see docs/synth.md for why each).
enum class Init {
  linear,    ///< N(0, scale^2 / fan_in): a projection that keeps activations at unit scale
  normal,    ///< N(0, scale^2)
  norm,      ///< 1 + N(0, 0.1^2): RMS-norm weights
  constant,  ///< every element = scale
};

struct TensorSpec {
  std::string name;            ///< canonical name, "blk.3.ffn_down_exps.weight"
  std::vector<int64_t> shape;  ///< GGUF order: innermost first
  int64_t layer = -1;          ///< block index; -1 for token_embd, output_norm, output
  std::string kind;            ///< the name without "blk.N." and ".weight": "attn_v", "ffn_down_exps"
  Init init = Init::linear;
  double scale = 1.0;
  bool matrix = false;         ///< a weight matrix a type mix may quantize (norms, biases, router stay F32)
};

struct Layout {
  std::vector<std::pair<std::string, MetaValue>> metadata;  ///< general.* and <arch>.* keys
  std::vector<TensorSpec> tensors;
};

/// The GGUF layout of a topology (no tokenizer keys).
Layout model_layout(const Topology& t);

}  // namespace sy::synth
