// Defaults shared by validation (a pipeline without the section) and the command-line
// flags that tune them.
#pragma once

#include <string>
#include <vector>

namespace sy::pipeline {

/// One sampler of the default chain and its main parameter's value ("" for none).
struct DefaultSampler {
  std::string name;
  std::string value;
};

/// llama.cpp's everyday chain: top_k 40, top_p 0.95, min_p 0.05, temperature 0.8, dist.
inline const std::vector<DefaultSampler>& default_sampling_chain() {
  static const std::vector<DefaultSampler> chain{
      {"top_k", "40"}, {"top_p", "0.95"}, {"min_p", "0.05"}, {"temperature", "0.8"}, {"dist", ""}};
  return chain;
}

}  // namespace sy::pipeline
