#include "names.hpp"

#include <charconv>
#include <string_view>
#include <utility>

namespace sy::hf {
namespace {

bool eat(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// A decimal index followed by '.', consumed from s.
std::optional<int64_t> eat_index(std::string_view& s) {
  int64_t n = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end == s.data() || end == s.data() + s.size() || *end != '.' || n < 0) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()) + 1);
  return n;
}

struct Rule {
  std::string_view hf;    // the name after "layers.N."
  std::string_view gguf;  // after "blk.N."
  Action action;
};

// Per-layer names shared by the architectures (transformers' module names).
constexpr Rule kLayer[] = {
    {"input_layernorm.weight", "attn_norm.weight", Action::to_f32},
    {"post_attention_layernorm.weight", "ffn_norm.weight", Action::to_f32},
    {"self_attn.q_proj.weight", "attn_q.weight", Action::permute_q},
    {"self_attn.k_proj.weight", "attn_k.weight", Action::permute_k},
    {"self_attn.v_proj.weight", "attn_v.weight", Action::copy},
    {"self_attn.o_proj.weight", "attn_output.weight", Action::copy},
    {"self_attn.q_proj.bias", "attn_q.bias", Action::permute_q},
    {"self_attn.k_proj.bias", "attn_k.bias", Action::permute_k},
    {"self_attn.v_proj.bias", "attn_v.bias", Action::to_f32},
    {"self_attn.o_proj.bias", "attn_output.bias", Action::to_f32},
    {"self_attn.q_norm.weight", "attn_q_norm.weight", Action::to_f32},
    {"self_attn.k_norm.weight", "attn_k_norm.weight", Action::to_f32},
    {"mlp.gate_proj.weight", "ffn_gate.weight", Action::copy},
    {"mlp.up_proj.weight", "ffn_up.weight", Action::copy},
    {"mlp.down_proj.weight", "ffn_down.weight", Action::copy},
    // The router stays F32, as llama.cpp's converter keeps it: a near-tie between experts must
    // not be decided by rounding its activations to BF16.
    {"mlp.gate.weight", "ffn_gate_inp.weight", Action::to_f32},
    {"block_sparse_moe.gate.weight", "ffn_gate_inp.weight", Action::to_f32},
    // transformers v5 fused experts: gate_up_proj [E, 2I, H] holds each expert's gate rows
    // then its up rows, which is llama.cpp's ffn_gate_up_exps; down_proj [E, H, I] is
    // ffn_down_exps. Both are views.
    {"mlp.experts.gate_up_proj", "ffn_gate_up_exps.weight", Action::copy},
    {"mlp.experts.down_proj", "ffn_down_exps.weight", Action::copy},
    {"mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight", Action::copy},
    {"mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight", Action::copy},
    {"mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight", Action::copy},
    {"mlp.shared_expert_gate.weight", "ffn_gate_inp_shexp.weight", Action::to_f32},
};

// Qwen3.5/3.6's gated delta-net layers (llama.cpp's QWEN35MOE names), and the norm after
// attention, which its GGUF names post_attention_norm.
constexpr Rule kHybridLayer[] = {
    {"post_attention_layernorm.weight", "post_attention_norm.weight", Action::to_f32},
    {"linear_attn.in_proj_qkv.weight", "attn_qkv.weight", Action::copy},
    {"linear_attn.in_proj_z.weight", "attn_gate.weight", Action::copy},
    {"linear_attn.in_proj_a.weight", "ssm_alpha.weight", Action::copy},
    {"linear_attn.in_proj_b.weight", "ssm_beta.weight", Action::copy},
    {"linear_attn.A_log", "ssm_a", Action::to_f32},
    {"linear_attn.dt_bias", "ssm_dt.bias", Action::to_f32},
    {"linear_attn.conv1d.weight", "ssm_conv1d.weight", Action::to_f32},
    {"linear_attn.norm.weight", "ssm_norm.weight", Action::to_f32},
    {"linear_attn.out_proj.weight", "ssm_out.weight", Action::copy},
};

// The Qwen3.5 conversions llama.cpp's converter makes on the way to its GGUF (the engine
// reads that form): norms hold w - 1 except the delta-net's own, A_log becomes -exp, and
// the value heads of the linear-attention tensors go from grouped to tiled order.
Mapped hybrid_extras(Mapped m, std::string_view hf, const HfConfig& c) {
  if (hf.ends_with("norm.weight") && hf != "linear_attn.norm.weight") m.values = Values::plus_one;
  if (hf == "linear_attn.A_log") m.values = Values::neg_exp;
  if (hf == "linear_attn.conv1d.weight") m.squeeze = true;
  if (c.lin_v_heads == c.lin_k_heads) return m;  // one value head per key head: nothing to tile
  const int64_t d = c.lin_head_dim, qk = 2 * c.lin_k_heads * d;
  if (hf == "linear_attn.in_proj_qkv.weight" || hf == "linear_attn.conv1d.weight") {
    m.heads = ValueHeads::rows, m.heads_first = qk, m.heads_per_head = d;
  } else if (hf == "linear_attn.in_proj_z.weight") {
    m.heads = ValueHeads::rows, m.heads_per_head = d;
  } else if (hf == "linear_attn.in_proj_a.weight" || hf == "linear_attn.in_proj_b.weight" ||
             hf == "linear_attn.A_log" || hf == "linear_attn.dt_bias") {
    m.heads = ValueHeads::rows, m.heads_per_head = 1;
  } else if (hf == "linear_attn.out_proj.weight") {
    m.heads = ValueHeads::columns, m.heads_per_head = d;
  }
  return m;
}

// One expert's matrices: Qwen's mlp.experts.E.{gate,up,down}_proj and Mixtral's
// block_sparse_moe.experts.E.{w1 (gate), w3 (up), w2 (down)}.
constexpr std::pair<std::string_view, std::string_view> kExpert[] = {
    {"gate_proj.weight", "ffn_gate_exps.weight"}, {"up_proj.weight", "ffn_up_exps.weight"},
    {"down_proj.weight", "ffn_down_exps.weight"}, {"w1.weight", "ffn_gate_exps.weight"},
    {"w3.weight", "ffn_up_exps.weight"},          {"w2.weight", "ffn_down_exps.weight"},
};

}  // namespace

Mapped map_name(const std::string& hf_name, const HfConfig& c) {
  std::string_view s = hf_name;
  if (s == "lm_head.weight") return {Action::copy, "output.weight"};
  if (s.find("rotary_emb.inv_freq") != std::string_view::npos) return {Action::skip, "rotary inverse frequencies"};
  if (s.substr(0, 4) == "mtp." || s.find(".mtp.") != std::string_view::npos) return {Action::skip, "multi-token prediction"};
  std::string_view rest = s;
  if (!eat(rest, c.text_prefix)) {
    if (s.find("visual.") != std::string_view::npos || s.find("vision") != std::string_view::npos)
      return {Action::skip, "vision"};
    return {};
  }
  if (rest == "embed_tokens.weight") return {Action::copy, "token_embd.weight"};
  if (rest == "norm.weight") {
    Mapped m{Action::to_f32, "output_norm.weight"};
    if (c.hybrid) m.values = Values::plus_one;
    return m;
  }
  if (!eat(rest, "layers.")) return {};
  const auto layer = eat_index(rest);
  if (!layer) return {};
  const std::string blk = "blk." + std::to_string(*layer) + ".";
  if (c.hybrid)
    for (const auto& r : kHybridLayer)
      if (rest == r.hf) return hybrid_extras({r.action, blk + std::string(r.gguf)}, rest, c);
  for (const auto& r : kLayer) {
    if (rest != r.hf) continue;
    Action a = r.action;
    // Only llama's rotation needs the row order changed; elsewhere q/k are plain matrices
    // and their biases vectors read as F32.
    if ((a == Action::permute_q || a == Action::permute_k) && !c.permute_qk)
      a = rest.ends_with(".bias") ? Action::to_f32 : Action::copy;
    Mapped m{a, blk + std::string(r.gguf)};
    // The shared expert's gate is one row, [1, H]; the engine reads it as a vector.
    m.squeeze = rest == "mlp.shared_expert_gate.weight";
    return c.hybrid ? hybrid_extras(std::move(m), rest, c) : m;
  }
  if (eat(rest, "mlp.experts.") || eat(rest, "block_sparse_moe.experts.")) {
    const auto e = eat_index(rest);
    if (!e) return {};
    for (const auto& [hf, gguf] : kExpert)
      if (rest == hf) return {Action::expert, blk + std::string(gguf), *e};
  }
  return {};
}

}  // namespace sy::hf
