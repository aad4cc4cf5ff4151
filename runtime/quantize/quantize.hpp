// `switchyard quantize`: a GGUF model, or a model folder a format plugin opens (a Hugging
// Face checkpoint), into a GGUF with the recipe's types (tensor_types.hpp). Each tensor is
// read through the reference dequantizer of its type and written by the SDK's quantizers
// (which never do worse than llama.cpp's reference recipe); gguf_tools/rewrite.hpp writes
// the file (threads, temporary name, rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "gguf_tools/rewrite.hpp"
#include "quantize/imatrix.hpp"
#include "quantize/tensor_types.hpp"

namespace sy::quant_tool {

struct QuantizeOptions {
  Recipe recipe;
  TypeOptions types;
  bool allow_requantize = false;  ///< a source tensor already quantized may be quantized again
  int threads = 0;                ///< 0: every hardware thread
  /// Importance matrix (`switchyard imatrix`): each quantized tensor it names is quantized
  /// minimising the error weighted by its columns' mean squared activation.
  const Imatrix* imatrix = nullptr;
};

using TensorReport = gguf_tools::TensorReport;

struct QuantizeSummary {
  uint64_t bytes_in = 0, bytes_out = 0;
  size_t tensors = 0, quantized = 0;
  std::vector<std::string> fallbacks;
  std::vector<std::string> notes;  ///< about the input (a folder without tokenizer.json...)
  size_t weighted = 0;             ///< tensors quantized with importance weights
};

/// The quantizer's weights for one tensor from an importance matrix entry: per matrix
/// (expert), each column's mean squared activation scaled to a mean of 1 and floored at
/// 1e-3, so a column no token used still counts a little; a matrix no token reached gets
/// weights of 1 (the unweighted search). Errors name the tensor when the entry's shape
/// does not fit it.
Result<std::vector<float>> importance_weights(const TensorDesc& t, const ImatrixEntry& e);

/// Quantizes `input` into `output`; `progress` (optional) is called after each tensor.
Result<QuantizeSummary> quantize_model(const std::filesystem::path& input, const std::filesystem::path& output,
                                       const QuantizeOptions& o,
                                       const gguf_tools::Progress& progress = {});

}  // namespace sy::quant_tool
