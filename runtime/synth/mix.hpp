// Storage types per tensor: a single type for every weight matrix ("q8_0", "f16", "q4_k"),
// or llama.cpp's K-quant mixes ("q4_k_m", "q5_k_m"). The rule is written out in
// docs/synth.md; norms, biases and the MoE router always stay F32.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "switchyard/status.hpp"
#include "switchyard/tensor.hpp"
#include "synth/layout.hpp"

namespace sy::synth {

struct TypeMix {
  std::string name;                      ///< as given, lower case: "q4_k_m", "q8_0", "f16"
  StorageType base = StorageType::Q8_0;  ///< the type of most matrices
  bool k_mix = false;                    ///< the _M rule: Q6_K for output and some attn_v / ffn_down
};

/// "q4_k_m", "q5_k_m" or any storage type synth can write; the error lists the choices.
Result<TypeMix> parse_type_mix(std::string_view name);

/// Every tensor of the layout with its storage type and size in bytes.
std::vector<TensorDesc> assign_types(const TypeMix& mix, const std::vector<TensorSpec>& tensors);

}  // namespace sy::synth
