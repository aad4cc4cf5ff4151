// Hyper-parameters of a model, read from its metadata under "<architecture>.*". A missing
// key that the architecture needs is an error naming the key.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"
#include "switchyard/tensor.hpp"

namespace sy::model {

struct HParams {
  std::string arch;
  int64_t n_vocab = 0, n_embd = 0, n_ctx_train = 0;
  int64_t n_layer = 0;        ///< blocks decoding runs: block_count less the prediction blocks
  int64_t n_layer_nextn = 0;  ///< multi-token-prediction blocks after them (never run)
  int64_t n_head = 0, n_head_kv = 0, head_dim_k = 0, head_dim_v = 0;
  int64_t n_ff = 0;
  float eps = 1e-5f;
  // RoPE
  int64_t n_rot = 0;
  float rope_base = 10000.f, rope_scale = 1.f;
  int rope_sections[4] = {0, 0, 0, 0};
  // Mixture of experts
  int64_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_ff_shexp = 0;
  float expert_weights_scale = 1.f;
  bool expert_weights_norm = false;
  int expert_gating = 0;  ///< 0: softmax over the expert logits, 1: sigmoid of each
  int64_t n_leading_dense = 0;
  // Multi-head latent attention (deepseek2)
  int64_t q_lora_rank = 0, kv_lora_rank = 0, head_dim_k_mla = 0, head_dim_v_mla = 0;
  // Linear attention (Qwen3.5/3.6 gated delta net)
  int64_t full_attn_interval = 0, ssm_conv_kernel = 0, ssm_state = 0, ssm_groups = 0, ssm_v_heads = 0;

  /// Whether layer il keeps a KV cache (full attention) rather than recurrent state.
  [[nodiscard]] bool is_full_attention(int64_t il) const {
    return full_attn_interval <= 0 || (il + 1) % full_attn_interval == 0;
  }
  [[nodiscard]] int64_t n_full_attention_layers() const;
  [[nodiscard]] int64_t n_linear_layers() const { return n_layer - n_full_attention_layers(); }
  /// Floats of convolution state per linear-attention layer and sequence.
  [[nodiscard]] int64_t conv_state_floats() const {
    return (ssm_conv_kernel - 1) * (2 * ssm_groups * ssm_state + ssm_v_heads * ssm_state);
  }
  /// Floats of delta-net state per linear-attention layer and sequence.
  [[nodiscard]] int64_t delta_state_floats() const { return ssm_state * ssm_state * ssm_v_heads; }
};

/// Reads the hyper-parameters; `n_vocab` comes from the token table's row count. Every
/// value is range-checked and cross-checked; a problem is an error naming the key, the
/// value found and what it must be.
Result<HParams> read_hparams(const Metadata& md, int64_t n_vocab);

/// The hyper-parameters of a model with these tensors (n_vocab from token_embd.weight),
/// also checked against them: embedding_length and vocab_size against token_embd.weight,
/// block_count against the blk.N tensors present.
Result<HParams> read_hparams(const Metadata& md, std::span<const TensorDesc> tensors);

/// N of a "blk.N.*" tensor name, or -1 for any other name (never throws).
int64_t block_index(std::string_view name);

}  // namespace sy::model
