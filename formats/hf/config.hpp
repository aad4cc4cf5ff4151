// config.json of a Hugging Face model folder, turned into the metadata keys the engine reads
// from a GGUF ("{arch}.embedding_length", ...) plus the facts the tensor-name mapping needs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"

namespace sy::hf {

/// What the rest of the reader needs to know about the model.
struct HfConfig {
  std::string hf_arch;      ///< "Qwen3MoeForCausalLM"
  std::string arch;         ///< the engine's name: "qwen3moe"
  std::string text_prefix;  ///< where the language model's tensors start: "model." or "model.language_model."
  int64_t n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_expert = 0;
  bool permute_qk = false;  ///< llama: HF's half-split rotary rows become llama.cpp's adjacent pairs
  bool hybrid = false;      ///< qwen35moe: gated delta-net layers beside full attention
  bool tied = false;        ///< tie_word_embeddings
  int64_t n_mtp_layers = 0; ///< qwen35moe multi-token-prediction blocks (skipped)
  /// qwen35moe linear attention: key heads, value heads (a multiple), and their common size.
  int64_t lin_k_heads = 0, lin_v_heads = 0, lin_head_dim = 0;
  Metadata md;
  std::vector<float> rope_freqs;  ///< Llama 3 rope scaling factors (rope_freqs.weight); empty: none
};

/// The architectures this reader maps, for messages: "LlamaForCausalLM, ...".
const char* supported_architectures() noexcept;

/// config.json's quantization_config (top level or the text model's); nullptr when absent.
const nlohmann::json* quantization_config(const nlohmann::json& cfg);

/// The plugin that reads a quantized checkpoint ("awq", "gptq", "fp8"), from config.json's
/// quantization_config; nullopt when the checkpoint is not quantized. An unknown method
/// gives its own name.
std::optional<std::string> quantized_by(const nlohmann::json& cfg);

/// Maps config.json (already parsed; `file` names it in messages).
Result<HfConfig> read_config(const nlohmann::json& cfg, const std::string& file);

}  // namespace sy::hf
