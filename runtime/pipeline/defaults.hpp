// Defaults shared by validation (a pipeline without the section), `--set` (which may
// address an item of a default list by name) and the command-line flags that tune them.
#pragma once

#include <string>
#include <vector>

#include "pipeline/tree.hpp"

namespace sy::pipeline {

/// One sampler of the default chain and its main parameter's value ("" for none).
struct DefaultSampler {
  std::string name;
  std::string value;
};

/// llama.cpp's everyday chain: top_k 40, top_p 0.95, min_p 0.05, temperature 0.8, dist.
const std::vector<DefaultSampler>& default_sampling_chain();

/// The default chain as the document would write it (`[ { top_k: 40 }, ..., dist ]`),
/// every node located at `where`.
Node default_sampling_node(const Location& where);

/// The default backends as the document would write them: `[ { plugin: cpu } ]`.
Node default_backends_node(const Location& where);

}  // namespace sy::pipeline
