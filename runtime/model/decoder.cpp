// The decoder-only transformers we run: llama (with Mixtral-style experts), qwen2, qwen3,
// qwen2moe, qwen3moe and qwen35moe (Qwen3.5/3.6: gated delta-net linear attention in 3 of
// every 4 layers, gated full attention in the 4th, routed + shared experts). They differ
// in a few switches, so one builder with per-architecture traits keeps the graphs in one
// place; docs/engine.md lists what each switch means.
#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <vector>

#include "model/architecture.hpp"
#include "model/layers.hpp"

namespace sy::model {
namespace {

using graph::TensorId;

struct Traits {
  const char* name;
  int rope_mode;       // 0 adjacent pairs (llama), 1 neox
  bool moe_renorm;     // renormalise the top-k expert weights
  bool hybrid;         // qwen35moe: linear-attention layers + gated full attention
  bool rope_factors;   // applies rope_freqs.weight (llama.cpp: llama only; the Qwen graphs pass none)
};

constexpr Traits kTraits[] = {
    {"llama", 0, true, false, true},      {"qwen2", 1, true, false, false},    {"qwen3", 1, true, false, false},
    {"qwen2moe", 1, false, false, false}, {"qwen3moe", 1, true, false, false}, {"qwen35moe", 1, true, true, false},
};

class Decoder final : public Architecture {
 public:
  Decoder(const Traits& tr, const HParams& hp, const Weights& w) : tr_(tr), hp_(hp), weights_(w) {}

  Status resolve(const Weights& w) {
    Resolver r(w, tr_.name, views_);
    const Dims d{hp_};
    emb_ = resolve_embeddings(r, d);
    rope_freqs_ = resolve_rope_freqs(r, d, tr_.rope_factors);
    layers_.resize(static_cast<size_t>(hp_.n_layer));
    for (int64_t il = 0; il < hp_.n_layer && r.status(); ++il) {
      auto& L = layers_[static_cast<size_t>(il)];
      const std::string b = "blk." + std::to_string(il) + ".";
      L.attn_norm = r.req_f32(b + "attn_norm.weight", {d.embd()});
      L.ffn_norm = r.req_f32(b + (tr_.hybrid ? "post_attention_norm.weight" : "ffn_norm.weight"), {d.embd()});
      L.full = !tr_.hybrid || hp_.is_full_attention(il);
      if (L.full) {
        L.attn = resolve_attention(r, d, b, tr_.hybrid);
      } else {
        L.delta = resolve_delta(r, hp_, b);
      }
      if (hp_.n_expert > 0 && w.find(b + "ffn_gate_inp.weight")) {
        L.moe = resolve_moe(r, d, b);
      } else {
        L.ffn = resolve_ffn(r, d, b, "", d.ff());
      }
    }
    return r.status();
  }

  TensorId build(graph::Graph& g, const StepInputs& in) const override {
    Ctx c{g, in, hp_, weights_};
    c.rope_freqs = rope_freqs_;
    c.bind_inputs();
    TensorId x = g.get_rows(c.w(emb_.tok_embd), c.tokens);
    int64_t full_index = 0, linear_index = 0;
    for (int64_t il = 0; il < hp_.n_layer; ++il) {
      const auto& L = layers_[static_cast<size_t>(il)];
      const TensorId h = g.norm(x, c.w(L.attn_norm), hp_.eps);
      TensorId a;
      if (L.full) {
        a = attention(c, L.attn, h, full_index++, tr_.rope_mode, tr_.hybrid);
      } else {
        a = delta_net(c, L.delta, h, linear_index++);
      }
      x = g.binary(OpKind::add, x, a);
      // Only the rows whose logits are wanted go through the last layer's FFN and the head.
      if (il == hp_.n_layer - 1 && in.n_outputs < in.n_tokens && !in.all_rows()) x = g.get_rows(x, c.out_rows);
      const TensorId f = g.norm(x, c.w(L.ffn_norm), hp_.eps);
      const TensorId y = L.moe.router ? moe(c, L.moe, f, RouterConfig{false, tr_.moe_renorm, 1.0f}) : ffn(c, L.ffn, f);
      x = g.binary(OpKind::add, x, y);
    }
    if (in.all_rows() && in.n_outputs < in.n_tokens) x = g.get_rows(x, c.out_rows);
    return lm_head(c, emb_, x);
  }

 private:
  Traits tr_;
  HParams hp_;
  const Weights& weights_;
  std::deque<GraphTensor> views_;  // rows of fused tensors the layers point into
  EmbeddingWeights emb_;
  const GraphTensor* rope_freqs_ = nullptr;
  std::vector<LayerWeights> layers_;
};

}  // namespace

Result<std::unique_ptr<Architecture>> make_architecture(const HParams& hp, const Weights& w) {
  if (hp.arch == "deepseek2") return make_deepseek2(hp, w);
  std::string names;
  for (const auto& t : kTraits) {
    if (hp.arch == t.name) {
      if (t.hybrid && (hp.full_attn_interval <= 0 || hp.ssm_state <= 0 || hp.ssm_groups <= 0 || hp.ssm_v_heads <= 0 ||
                       hp.ssm_conv_kernel <= 1))
        return error::invalid_argument("the " + hp.arch +
                                       " model lacks its linear-attention hyper-parameters (full_attention_interval, "
                                       "ssm.conv_kernel of 2 or more, ssm.state_size, ssm.group_count, "
                                       "ssm.time_step_rank, each positive)");
      if (t.hybrid && hp.ssm_v_heads % hp.ssm_groups != 0)
        return error::invalid_argument(hp.arch + ".ssm.time_step_rank (" + std::to_string(hp.ssm_v_heads) +
                                       " value heads) must be a multiple of " + hp.arch + ".ssm.group_count (" +
                                       std::to_string(hp.ssm_groups) + " key heads)");
      if (hp.n_expert == 0 && hp.n_ff <= 0)
        return error::invalid_argument(hp.arch + ".feed_forward_length is missing or 0; a model without experts "
                                       "needs its feed-forward width");
      auto d = std::make_unique<Decoder>(t, hp, w);
      if (auto st = d->resolve(w); !st) return st;
      return std::unique_ptr<Architecture>(std::move(d));
    }
    names += names.empty() ? "" : ", ";
    names += t.name;
  }
  return error::unsupported("architecture '" + hp.arch + "' is not supported; this build runs " + names +
                            ", deepseek2");
}

}  // namespace sy::model
