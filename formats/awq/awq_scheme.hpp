// AutoAWQ's GEMM layout (quant_method "awq", version "gemm"): 4-bit codes packed eight to an
// int32 along the output dimension in the nibble order (0, 2, 4, 6, 1, 3, 5, 7), zero points
// packed the same way, f16 scales per group of input rows.
#pragma once

#include <memory>

#include "qconfig.hpp"
#include "quant_scheme.hpp"

namespace sy::awq {

/// The scheme for a checkpoint's quantization_config; refuses layouts it does not read.
Result<std::unique_ptr<hf::QuantScheme>> make_scheme(const nlohmann::json& qcfg, const std::string& config_file);

/// Output column 8c + i of a packed int32 sits in nibble kNibbleOf[i] of word c.
inline constexpr int kNibbleOf[8] = {0, 4, 1, 5, 2, 6, 3, 7};

}  // namespace sy::awq
