// What `quantize TYPE` means: a plain storage type for every quantizable tensor, or one of
// llama.cpp's named recipes (Q4_K_M, Q5_K_M, Q3_K_M, ...) whose per-tensor rules give some
// tensors more bits (tensor_types.hpp). Names are llama-quantize's, in any case.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "switchyard/status.hpp"
#include "switchyard/storage.hpp"

namespace sy::quant_tool {

enum class Mix { none, q2_k, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m };

struct Recipe {
  std::string name;                      ///< canonical, upper case: "Q4_K_M"
  StorageType base = StorageType::Q8_0;  ///< the type of most tensors
  Mix mix = Mix::none;                   ///< the per-tensor rules of a named recipe
  uint32_t file_type = 0;                ///< llama.cpp's general.file_type for it
  [[nodiscard]] bool quantized() const;  ///< false for F32 / F16 / BF16
};

/// A recipe or storage type name ("q4_k_m", "Q8_0", "iq4_xs", "f16"); the error lists every
/// choice. "Q3_K", "Q4_K" and "Q5_K" mean the _M recipes, as in llama-quantize.
Result<Recipe> parse_recipe(std::string_view name);

/// The storage types quantize writes (those the CPU backend computes), for --help and errors.
std::string recipe_names();

}  // namespace sy::quant_tool
