// FP8 checkpoints: transformers' `fp8` (weight_scale per tensor, or weight_scale_inv per
// 128x128 block, which multiplies despite its name) and compressed-tensors' float-quantized
// format (weight_scale per tensor, per output channel or per block). Weights are E4M3 (or
// E5M2) codes [out, in]; they become FP8_E4M3_B128 / FP8_E5M2_B128, each row's block of 128
// codes carrying its f32 scale, which is exact for every granularity whose blocks span a
// multiple of 128 input columns.
#pragma once

#include <memory>

#include "qconfig.hpp"
#include "quant_scheme.hpp"

namespace sy::fp8 {

enum class Granularity { tensor, channel, block };

struct Settings {
  Granularity granularity = Granularity::tensor;  ///< what the config says; block needs block sizes
  int64_t block_out = 128, block_in = 128;
  bool static_activations = false;                 ///< the checkpoint carries input_scale, which decode() reads
};

/// The scheme for a checkpoint's quantization_config ("fp8" or "compressed-tensors").
Result<std::unique_ptr<hf::QuantScheme>> make_scheme(const nlohmann::json& qcfg, const std::string& config_file);

}  // namespace sy::fp8
