// `switchyard quantize`: a GGUF model into another GGUF with the recipe's types
// (tensor_types.hpp). Each tensor is read through the reference dequantizer of its type and
// written by the SDK's quantizers (which never do worse than llama.cpp's reference recipe),
// rows split over threads. The output is written under a temporary name in its folder and
// renamed when complete, so an interrupted run leaves no half file under the final name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "quantize/tensor_types.hpp"

namespace sy::quant_tool {

struct QuantizeOptions {
  Recipe recipe;
  TypeOptions types;
  bool allow_requantize = false;  ///< a source tensor already quantized may be quantized again
  int threads = 0;                ///< 0: every hardware thread
};

/// One line per tensor as it is written.
struct TensorReport {
  size_t index = 0, count = 0;
  std::string name;
  StorageType from = StorageType::F32, to = StorageType::F32;
  uint64_t bytes_in = 0, bytes_out = 0;
};

struct QuantizeSummary {
  uint64_t bytes_in = 0, bytes_out = 0;
  size_t tensors = 0, quantized = 0;
  std::vector<std::string> fallbacks;
};

/// Quantizes `input` into `output`; `progress` (optional) is called after each tensor.
Result<QuantizeSummary> quantize_model(const std::filesystem::path& input, const std::filesystem::path& output,
                                       const QuantizeOptions& o,
                                       const std::function<void(const TensorReport&)>& progress = {});

}  // namespace sy::quant_tool
