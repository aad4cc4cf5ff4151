// Which storage type each tensor of a model gets under a recipe: llama-quantize's rules, so
// a Q4_K_M file of ours has the types a llama.cpp Q4_K_M file of the same model has.
//  - Only weight matrices are quantized: tensors of 2+ dimensions named *weight, except
//    norms, the MoE router (ffn_gate_inp), ssm_conv1d and, with --leave-output-tensor,
//    output.weight; the rest keep their type.
//  - Named recipes give more bits where it pays (all "more bits" layers are the first and
//    last eighth plus every third in between): output.weight (and a tied token_embd) Q6_K;
//    attn_v-like tensors (attn_v, attn_qkv, attn_kv_b) Q6_K in the more-bits layers for
//    Q4_K_M / Q5_K_M; ffn_down likewise; Q8_0 attn_v / attn_k and Q5_K attn_output for
//    8-expert models; the Q2_K / Q3_K / Q4_K_S rules as llama.cpp has them.
//  - --pure skips the rules; --tensor-type PATTERN=TYPE, --output-tensor-type and
//    --token-embedding-type override them.
//  - A row whose length is not a multiple of the chosen type's block falls back to a
//    32-element type (Q4_K -> Q5_0, Q6_K -> Q8_0, ...), or F16.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "quantize/recipe.hpp"
#include "switchyard/metadata.hpp"
#include "switchyard/tensor.hpp"

namespace sy::quant_tool {

struct TypeOptions {
  bool pure = false;
  bool leave_output = false;
  std::optional<StorageType> output_type, token_embd_type;
  std::vector<std::pair<std::string, StorageType>> overrides;  ///< --tensor-type, first match wins
};

/// The facts of the model the rules read.
struct ModelFacts {
  int64_t n_layer = 0, n_head = 0, n_head_kv = 0, n_expert = 0;
  bool has_output = false;  ///< an output.weight of its own (else the embeddings are tied)
  static ModelFacts from(const Metadata& md, const std::vector<TensorDesc>& tensors);
};

class TypeChooser {
 public:
  /// Checks the override patterns (an invalid regex is an error naming it).
  static Result<TypeChooser> create(const Recipe& r, const ModelFacts& facts, const std::vector<TensorDesc>& tensors,
                                    TypeOptions o);
  /// The type of the next tensor; call once per tensor, in file order (the rules count).
  StorageType next(const TensorDesc& t);
  /// Whether the rules let `t` be quantized at all.
  [[nodiscard]] bool quantizable(const TensorDesc& t) const;
  /// Tensors that fell back to another type because of their row length, with the reason.
  [[nodiscard]] const std::vector<std::string>& fallbacks() const { return fallbacks_; }

 private:
  TypeChooser() = default;
  StorageType rules(const TensorDesc& t, StorageType type);
  StorageType fit(const TensorDesc& t, StorageType type);

  Recipe recipe_;
  ModelFacts facts_;
  TypeOptions opts_;
  std::vector<std::pair<std::regex, StorageType>> patterns_;
  int64_t n_attn_v_ = 0, i_attn_v_ = 0, i_ffn_down_ = 0;
  std::vector<std::string> fallbacks_;
};

}  // namespace sy::quant_tool
