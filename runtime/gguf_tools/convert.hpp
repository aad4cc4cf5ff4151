// `switchyard convert`: a model folder (a Hugging Face checkpoint: safetensors in bf16, f16
// or f32, or an AWQ, GPTQ or FP8 checkpoint through their format plugins) into one GGUF file
// that llama.cpp loads: the reader's canonical tensor names and layouts, the hyper-parameters
// as GGUF keys, the tokenizer.json as tokenizer.ggml.* keys and the chat template.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gguf_tools/rewrite.hpp"

namespace sy::gguf_tools {

/// llama.cpp's convert_hf_to_gguf.py --outtype choices.
enum class OutType { automatic, f32, f16, bf16, q8_0 };

/// "auto", "f32", "f16", "bf16", "q8_0"; nullopt for anything else.
std::optional<OutType> parse_outtype(std::string_view s);
/// The names parse_outtype() accepts, for messages.
std::string outtype_names();

/// The type a tensor is written in. As llama.cpp's converter: vectors, the MoE routers and
/// the SSM convolution stay F32 (the source's F32 tensors too: the reader made them F32
/// because that is how they are computed); the other tensors take `out`. `automatic` keeps
/// every type GGUF can store and writes the others (dequantized AWQ/GPTQ/FP8 linears) as F16,
/// or BF16 for FP8 (whose range F16 may not hold). Q8_0 falls back to F16 for rows that are
/// not whole blocks.
StorageType convert_type(const TensorDesc& t, OutType out);

struct ConvertOptions {
  OutType outtype = OutType::automatic;
  int threads = 0;  ///< 0: every hardware thread
};

struct ConvertSummary {
  std::string format;  ///< the format plugin that read the folder
  size_t tensors = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  std::vector<std::string> notes;
};

/// Converts the folder `input` into `output`.
Result<ConvertSummary> convert_folder(const std::filesystem::path& input, const std::filesystem::path& output,
                                      const ConvertOptions& o, const Progress& progress = {});

}  // namespace sy::gguf_tools
