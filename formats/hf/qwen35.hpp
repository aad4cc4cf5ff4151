// Qwen3.5/3.6 MoE folders (Qwen3_5MoeForConditionalGeneration): the gated delta-net settings
// of config.json, and the value-head order of the linear-attention tensors. transformers
// keeps a key head's value heads together; llama.cpp's GGUF converter tiles them (value head
// h pairs with key head h mod key heads), which is the order the engine's graph reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.hpp"

namespace sy::hf {

/// Reads the linear-attention settings of text config `t` (`where`: its prefix in messages,
/// `rope`: the object holding the rope settings) into c: the ssm.* keys,
/// full_attention_interval, rope.dimension_sections and c's linear-attention shape.
Status read_linear_attention(const nlohmann::json& t, const std::string& file, const std::string& where,
                             const nlohmann::json& rope, HfConfig& c);

/// For a tensor of `rows` rows whose rows from `first` on are value heads of `per_head` rows
/// each, grouped by key head: the source row of every destination row in the tiled order.
std::vector<int64_t> tiled_value_rows(int64_t rows, int64_t first, int64_t per_head, int64_t k_heads, int64_t v_heads);

}  // namespace sy::hf
