#include "model/hparams.hpp"

namespace sy::model {

int64_t HParams::n_full_attention_layers() const {
  int64_t n = 0;
  for (int64_t il = 0; il < n_layer; ++il) n += is_full_attention(il) ? 1 : 0;
  return n;
}

Result<HParams> read_hparams(const Metadata& md, int64_t n_vocab) {
  HParams h;
  const auto arch = md.get_string("general.architecture");
  if (!arch) return error::invalid_argument("the model has no general.architecture key; is it a language model?");
  h.arch = *arch;
  const std::string p = h.arch + ".";
  Status missing = Status::ok();
  auto req = [&](const char* key) -> int64_t {
    if (auto v = md.get_int(p + key)) return *v;
    if (missing) missing = error::invalid_argument("the model lacks the hyper-parameter " + p + key);
    return 0;
  };
  auto opt = [&](const char* key, int64_t def) { return md.get_int(p + key).value_or(def); };
  h.n_vocab = n_vocab;
  h.n_embd = req("embedding_length");
  h.n_layer = req("block_count");
  h.n_ctx_train = opt("context_length", 4096);
  h.n_head = md.get_per_layer_int(p + "attention.head_count", 0).value_or(0);
  if (h.n_head <= 0) return error::invalid_argument("the model lacks the hyper-parameter " + p + "attention.head_count");
  h.n_head_kv = md.get_per_layer_int(p + "attention.head_count_kv", 0).value_or(h.n_head);
  h.head_dim_k = opt("attention.key_length", h.n_embd / h.n_head);
  h.head_dim_v = opt("attention.value_length", h.head_dim_k);
  h.n_ff = md.get_per_layer_int(p + "feed_forward_length", 0).value_or(0);
  h.eps = static_cast<float>(md.get_float(p + "attention.layer_norm_rms_epsilon").value_or(1e-5));
  h.n_rot = opt("rope.dimension_count", h.head_dim_k);
  h.rope_base = static_cast<float>(md.get_float(p + "rope.freq_base").value_or(10000.0));
  if (auto f = md.get_float(p + "rope.scaling.factor"); f && *f > 0) h.rope_scale = static_cast<float>(1.0 / *f);
  if (const auto* v = md.find(p + "rope.dimension_sections"); v && std::holds_alternative<MetaArray>(*v)) {
    const auto& a = std::get<MetaArray>(*v);
    for (size_t i = 0; i < a.items.size() && i < 4; ++i) h.rope_sections[i] = static_cast<int>(meta_as_int(a.items[i]).value_or(0));
  }
  h.n_expert = opt("expert_count", 0);
  h.n_expert_used = opt("expert_used_count", 0);
  h.n_ff_exp = opt("expert_feed_forward_length", h.n_ff);
  // Shared experts: their width (Qwen), or a count of expert-sized ones (DeepSeek); none
  // when neither key is there.
  h.n_ff_shexp = opt("expert_shared_feed_forward_length", h.n_ff_exp * opt("expert_shared_count", 0));
  h.expert_weights_scale = static_cast<float>(md.get_float(p + "expert_weights_scale").value_or(1.0));
  h.expert_weights_norm = md.get_bool(p + "expert_weights_norm").value_or(false);
  h.expert_gating = opt("expert_gating_func", 1) == 2 ? 1 : 0;  // GGUF: 1 softmax, 2 sigmoid
  h.n_leading_dense = opt("leading_dense_block_count", 0);
  h.q_lora_rank = opt("attention.q_lora_rank", 0);
  h.kv_lora_rank = opt("attention.kv_lora_rank", 0);
  h.head_dim_k_mla = opt("attention.key_length_mla", 0);
  h.head_dim_v_mla = opt("attention.value_length_mla", 0);
  h.full_attn_interval = opt("full_attention_interval", 0);
  h.ssm_conv_kernel = opt("ssm.conv_kernel", 0);
  h.ssm_state = opt("ssm.state_size", 0);
  h.ssm_groups = opt("ssm.group_count", 0);
  h.ssm_v_heads = opt("ssm.time_step_rank", 0);
  if (!missing) return missing;
  if (h.n_embd <= 0 || h.n_layer <= 0 || h.n_head_kv <= 0 || h.n_head % h.n_head_kv != 0)
    return error::invalid_argument("the model's attention shape is inconsistent: " + std::to_string(h.n_head) +
                                   " query heads cannot share " + std::to_string(h.n_head_kv) + " KV heads");
  if (h.n_expert > 0 && (h.n_expert_used <= 0 || h.n_expert_used > h.n_expert))
    return error::invalid_argument(p + "expert_used_count must be between 1 and expert_count (" +
                                   std::to_string(h.n_expert) + ")");
  return h;
}

Result<HParams> read_hparams(const Metadata& md, std::span<const TensorDesc> tensors) {
  int64_t n_vocab = 0;
  for (const auto& t : tensors)
    if (t.name == "token_embd.weight" && t.shape.size() >= 2) n_vocab = t.shape[1];
  if (n_vocab == 0) return error::invalid_argument("the model has no token_embd.weight tensor");
  return read_hparams(md, n_vocab);
}

}  // namespace sy::model
