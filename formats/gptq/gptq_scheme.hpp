// GPTQ checkpoints as AutoGPTQ / GPTQModel write them (quant_method "gptq"; checkpoint_format
// "gptq" = v1, storing zero - 1, or "gptq_v2", storing the zero): 2, 3, 4 or 8-bit codes packed
// along the input dimension, zero points along the output dimension, f16 scales, and g_idx,
// the group of each input column (a permutation of groups with act-order, desc_act).
#pragma once

#include <memory>

#include "qconfig.hpp"
#include "quant_scheme.hpp"

namespace sy::gptq {

struct Settings {
  int bits = 4;
  int64_t group = 128;  ///< -1: one group per row
  bool sym = true;
  bool v2 = false;      ///< zero points stored as they are, not minus one
};

/// The scheme for a checkpoint's quantization_config; refuses layouts it does not read.
Result<std::unique_ptr<hf::QuantScheme>> make_scheme(const nlohmann::json& qcfg, const std::string& config_file);

}  // namespace sy::gptq
