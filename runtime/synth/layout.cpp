#include "synth/layout.hpp"

#include <cmath>

namespace sy::synth {
namespace {

struct Builder {
  Layout out;
  void key(const std::string& k, MetaValue v) { out.metadata.emplace_back(k, std::move(v)); }
  void tensor(int64_t layer, const std::string& kind, std::vector<int64_t> shape, Init init, double scale = 1.0,
              bool matrix = true, const char* suffix = ".weight") {
    TensorSpec s;
    s.name = (layer >= 0 ? "blk." + std::to_string(layer) + "." : std::string()) + kind + suffix;
    s.shape = std::move(shape);
    s.layer = layer;
    s.kind = kind;
    s.init = init;
    s.scale = scale;
    s.matrix = matrix && s.shape.size() >= 2;
    out.tensors.push_back(std::move(s));
  }
  void norm(int64_t layer, const std::string& kind, int64_t n) { tensor(layer, kind, {n}, Init::norm, 1.0, false); }
};

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

}  // namespace

Layout model_layout(const Topology& t) {
  Builder b;
  const std::string a = t.arch + ".";
  const bool hybrid = t.full_attn_interval > 0;
  b.key("general.architecture", t.arch);
  b.key("general.name", "switchyard synth " + t.name);
  b.key(a + "context_length", u32(t.n_ctx_train));
  b.key(a + "embedding_length", u32(t.n_embd));
  b.key(a + "block_count", u32(t.n_layer));
  b.key(a + "feed_forward_length", u32(t.n_ff ? t.n_ff : t.n_ff_exp));
  b.key(a + "attention.head_count", u32(t.n_head));
  b.key(a + "attention.head_count_kv", u32(t.n_head_kv));
  b.key(a + "attention.key_length", u32(t.head_dim));
  b.key(a + "attention.value_length", u32(t.head_dim));
  b.key(a + "attention.layer_norm_rms_epsilon", static_cast<float>(t.eps));
  b.key(a + "rope.freq_base", static_cast<float>(t.rope_base));
  b.key(a + "rope.dimension_count", u32(t.n_rot));
  b.key(a + "vocab_size", u32(t.n_vocab));
  if (t.rope_sections[0]) {
    MetaArray s{MetaType::i32, {}};
    for (int v : t.rope_sections) s.items.emplace_back(static_cast<int32_t>(v));
    b.key(a + "rope.dimension_sections", std::move(s));
  }
  if (t.n_expert) {
    b.key(a + "expert_count", u32(t.n_expert));
    b.key(a + "expert_used_count", u32(t.n_expert_used));
    b.key(a + "expert_feed_forward_length", u32(t.n_ff_exp));
    if (t.n_ff_shexp) b.key(a + "expert_shared_feed_forward_length", u32(t.n_ff_shexp));
  }
  if (hybrid) {
    b.key(a + "full_attention_interval", u32(t.full_attn_interval));
    b.key(a + "ssm.conv_kernel", u32(t.ssm_conv_kernel));
    b.key(a + "ssm.state_size", u32(t.ssm_state));
    b.key(a + "ssm.group_count", u32(t.ssm_groups));
    b.key(a + "ssm.time_step_rank", u32(t.ssm_v_heads));
    b.key(a + "ssm.inner_size", u32(t.ssm_v_heads * t.ssm_state));
  }

  const int64_t E = t.n_embd, hd = t.head_dim;
  // Residual branches write back at 1/sqrt(2 L): the stream stays dominated by the token
  // embedding plus a bounded sum of layer outputs, so tokens stay distinguishable deep into
  // the stack and routing does not collapse onto a few experts.
  const double out_gain = 1.0 / std::sqrt(2.0 * static_cast<double>(t.n_layer));
  b.tensor(-1, "token_embd", {E, t.n_vocab}, Init::normal, 1.0);
  for (int64_t il = 0; il < t.n_layer; ++il) {
    b.norm(il, "attn_norm", E);
    if (!hybrid || (il + 1) % t.full_attn_interval == 0) {
      b.tensor(il, "attn_q", {E, t.n_head * hd * (t.attn_output_gate ? 2 : 1)}, Init::linear);
      b.tensor(il, "attn_k", {E, t.n_head_kv * hd}, Init::linear);
      b.tensor(il, "attn_v", {E, t.n_head_kv * hd}, Init::linear);
      b.tensor(il, "attn_output", {t.n_head * hd, E}, Init::linear, out_gain);
      if (t.qk_norm) {
        // Norm weights around 2 give attention logits of a few units: peaked attention
        // like a trained model's, not the flat average that random q.k would give.
        b.tensor(il, "attn_q_norm", {hd}, Init::constant, 2.0, false);
        b.tensor(il, "attn_k_norm", {hd}, Init::norm, 1.0, false);
      }
    } else {
      const int64_t ch = 2 * t.ssm_groups * t.ssm_state + t.ssm_v_heads * t.ssm_state;
      b.tensor(il, "attn_qkv", {E, ch}, Init::linear);
      b.tensor(il, "attn_gate", {E, t.ssm_v_heads * t.ssm_state}, Init::linear);
      b.tensor(il, "ssm_conv1d", {t.ssm_conv_kernel, ch}, Init::normal, 0.5, false);
      b.tensor(il, "ssm_dt", {t.ssm_v_heads}, Init::normal, 0.5, false, ".bias");
      b.tensor(il, "ssm_a", {t.ssm_v_heads}, Init::constant, -0.5, false, "");
      b.tensor(il, "ssm_beta", {E, t.ssm_v_heads}, Init::linear);
      b.tensor(il, "ssm_alpha", {E, t.ssm_v_heads}, Init::linear);
      b.norm(il, "ssm_norm", t.ssm_state);
      b.tensor(il, "ssm_out", {t.ssm_v_heads * t.ssm_state, E}, Init::linear, out_gain);
    }
    b.norm(il, hybrid ? "post_attention_norm" : "ffn_norm", E);
    if (t.n_expert) {
      // The router stays F32 (llama.cpp never quantizes ffn_gate_inp); gain 2 spreads the
      // expert logits like a trained router's.
      b.tensor(il, "ffn_gate_inp", {E, t.n_expert}, Init::linear, 2.0, false);
      b.tensor(il, "ffn_gate_exps", {E, t.n_ff_exp, t.n_expert}, Init::linear);
      b.tensor(il, "ffn_up_exps", {E, t.n_ff_exp, t.n_expert}, Init::linear);
      b.tensor(il, "ffn_down_exps", {t.n_ff_exp, E, t.n_expert}, Init::linear, out_gain);
      if (t.n_ff_shexp) {
        b.tensor(il, "ffn_gate_inp_shexp", {E}, Init::normal, 1.0 / std::sqrt(static_cast<double>(E)), false);
        b.tensor(il, "ffn_gate_shexp", {E, t.n_ff_shexp}, Init::linear);
        b.tensor(il, "ffn_up_shexp", {E, t.n_ff_shexp}, Init::linear);
        b.tensor(il, "ffn_down_shexp", {t.n_ff_shexp, E}, Init::linear, out_gain);
      }
    } else {
      b.tensor(il, "ffn_gate", {E, t.n_ff}, Init::linear);
      b.tensor(il, "ffn_up", {E, t.n_ff}, Init::linear);
      b.tensor(il, "ffn_down", {t.n_ff, E}, Init::linear, out_gain);
    }
  }
  b.norm(-1, "output_norm", E);
  if (!t.tied_embeddings) b.tensor(-1, "output", {E, t.n_vocab}, Init::linear, 2.0);
  return std::move(b.out);
}

}  // namespace sy::synth
