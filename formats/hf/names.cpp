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
  std::string_view rest = s;
  if (!eat(rest, c.text_prefix)) {
    if (s.substr(0, 4) == "mtp." || s.find(".mtp.") != std::string_view::npos)
      return {Action::skip, "multi-token prediction"};
    if (s.find("visual.") != std::string_view::npos || s.find("vision") != std::string_view::npos)
      return {Action::skip, "vision"};
    return {};
  }
  if (rest == "embed_tokens.weight") return {Action::copy, "token_embd.weight"};
  if (rest == "norm.weight") return {Action::to_f32, "output_norm.weight"};
  if (!eat(rest, "layers.")) return {};
  const auto layer = eat_index(rest);
  if (!layer) return {};
  const std::string blk = "blk." + std::to_string(*layer) + ".";
  for (const auto& r : kLayer) {
    if (rest != r.hf) continue;
    Action a = r.action;
    // Only llama's rotation needs the row order changed; elsewhere q/k are plain matrices
    // and their biases vectors read as F32.
    if ((a == Action::permute_q || a == Action::permute_k) && !c.permute_qk)
      a = rest.ends_with(".bias") ? Action::to_f32 : Action::copy;
    return {a, blk + std::string(r.gguf)};
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
