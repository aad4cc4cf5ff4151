// DeepSeek-V2/V3 (GGUF "deepseek2"): multi-head latent attention run the way llama.cpp
// runs it with split attn_k_b / attn_v_b — the cache holds the compressed latent c and
// one shared rotary key per token, and each head's query is moved into latent space
// (W_kb q_nope) so attention is multi-query over [c | k_pe]. The first
// leading_dense_block_count layers have a dense FFN, the rest sigmoid-routed experts
// (selection biased by exp_probs_b) plus unconditional shared experts.
#include <cmath>
#include <deque>
#include <string>
#include <vector>

#include "model/architecture.hpp"
#include "model/layers.hpp"

namespace sy::model {
namespace {

using graph::TensorId;

struct MlaWeights {
  const GraphTensor *q_a = nullptr, *q_a_norm = nullptr, *q_b = nullptr, *q = nullptr;
  const GraphTensor *kv_a = nullptr, *kv_a_norm = nullptr, *k_b = nullptr, *v_b = nullptr, *o = nullptr;
};

struct Layer {
  const GraphTensor *attn_norm = nullptr, *ffn_norm = nullptr;
  MlaWeights mla;
  FfnWeights ffn;
  MoeWeights moe;
};

class DeepSeek2 final : public Architecture {
 public:
  DeepSeek2(const HParams& hp, const Weights& w) : hp_(hp), weights_(w) {}

  Status resolve(const Weights& w) {
    Resolver r(w, "deepseek2", views_);
    const Dims d{hp_};
    const Dim heads{hp_.n_head, d.key("attention.head_count", hp_.n_head)};
    const Dim q_rank{hp_.q_lora_rank, d.key("attention.q_lora_rank", hp_.q_lora_rank)};
    const Dim kv_rank{hp_.kv_lora_rank, d.key("attention.kv_lora_rank", hp_.kv_lora_rank)};
    const Dim rot{hp_.n_rot, d.key("rope.dimension_count", hp_.n_rot)};
    const Dim q{hp_.n_head * hp_.head_dim_k_mla,
                heads.from + " x " + d.key("attention.key_length_mla", hp_.head_dim_k_mla)};
    const Dim nope{hp_.head_dim_k_mla - hp_.n_rot,
                   d.key("attention.key_length_mla", hp_.head_dim_k_mla) + " - " + rot.from};
    const Dim v{hp_.head_dim_v_mla, d.key("attention.value_length_mla", hp_.head_dim_v_mla)};
    const Dim o{hp_.n_head * hp_.head_dim_v_mla, heads.from + " x " + v.from};
    emb_ = resolve_embeddings(r, d);
    resolve_rope_freqs(r, d, false);  // llama.cpp's deepseek2 graph passes no factors
    layers_.resize(static_cast<size_t>(hp_.n_layer));
    for (int64_t il = 0; il < hp_.n_layer && r.status(); ++il) {
      auto& L = layers_[static_cast<size_t>(il)];
      const std::string b = "blk." + std::to_string(il) + ".";
      L.attn_norm = r.req_f32(b + "attn_norm.weight", {d.embd()});
      L.ffn_norm = r.req_f32(b + "ffn_norm.weight", {d.embd()});
      if (hp_.q_lora_rank > 0) {
        L.mla.q_a = r.req(b + "attn_q_a.weight", {d.embd(), q_rank});
        L.mla.q_a_norm = r.req_f32(b + "attn_q_a_norm.weight", {q_rank});
        L.mla.q_b = r.req(b + "attn_q_b.weight", {q_rank, q});
      } else {
        L.mla.q = r.req(b + "attn_q.weight", {d.embd(), q});
      }
      L.mla.kv_a = r.req(b + "attn_kv_a_mqa.weight", {d.embd(), {kv_rank.n + rot.n, kv_rank.from + " + " + rot.from}});
      L.mla.kv_a_norm = r.req_f32(b + "attn_kv_a_norm.weight", {kv_rank});
      if (!r.has(b + "attn_k_b.weight") && r.has(b + "attn_kv_b.weight"))
        r.fail("the model has " + b + "attn_kv_b.weight but no " + b +
               "attn_k_b.weight: files converted before llama.cpp split the latent projection are not supported; "
               "convert the checkpoint again with a current convert_hf_to_gguf.py");
      L.mla.k_b = r.req(b + "attn_k_b.weight", {nope, kv_rank, heads});
      L.mla.v_b = r.req(b + "attn_v_b.weight", {kv_rank, v, heads});
      L.mla.o = r.req(b + "attn_output.weight", {o, d.embd()});
      if (il < hp_.n_leading_dense) {
        L.ffn = resolve_ffn(r, d, b, "", d.ff());
      } else {
        L.moe = resolve_moe(r, d, b);
        L.moe.select_bias = r.opt_f32(b + "exp_probs_b.bias", {d.experts()});
      }
    }
    return r.status();
  }

  TensorId build(graph::Graph& g, const StepInputs& in) const override {
    Ctx c{g, in, hp_, weights_};
    c.bind_inputs();
    // ids [0 .. heads) per token: matmul_id then applies head h's own matrix to head h.
    const auto need = static_cast<size_t>(hp_.n_head * in.n_tokens);
    if (head_ids_.size() < need) {
      head_ids_.resize(need);
      for (size_t i = 0; i < need; ++i) head_ids_[i] = static_cast<int32_t>(i % static_cast<size_t>(hp_.n_head));
    }
    const TensorId heads = g.input(StorageType::I32, head_ids_.data(), hp_.n_head, in.n_tokens);
    TensorId x = g.get_rows(c.w(emb_.tok_embd), c.tokens);
    int64_t kv_layer = 0;
    for (int64_t il = 0; il < hp_.n_layer; ++il) {
      const auto& L = layers_[static_cast<size_t>(il)];
      x = g.binary(OpKind::add, x, attention(c, L.mla, g.norm(x, c.w(L.attn_norm), hp_.eps), heads, kv_layer++));
      if (il == hp_.n_layer - 1 && in.n_outputs < in.n_tokens && !in.all_rows()) x = g.get_rows(x, c.out_rows);
      const TensorId f = g.norm(x, c.w(L.ffn_norm), hp_.eps);
      const TensorId y = L.moe.router ? moe(c, L.moe, f,
                                            RouterConfig{hp_.expert_gating == 1, hp_.expert_weights_norm,
                                                         hp_.expert_weights_scale})
                                      : ffn(c, L.ffn, f);
      x = g.binary(OpKind::add, x, y);
    }
    if (in.all_rows() && in.n_outputs < in.n_tokens) x = g.get_rows(x, c.out_rows);
    return lm_head(c, emb_, x);
  }

 private:
  TensorId attention(Ctx& c, const MlaWeights& w, TensorId x, TensorId heads, int64_t kv_layer) const {
    auto& g = c.g;
    const int64_t n = c.in.n_tokens, nh = hp_.n_head, rank = hp_.kv_lora_rank;
    const int64_t rot = hp_.n_rot, nope = hp_.head_dim_k_mla - rot, dq = hp_.head_dim_k_mla;
    const TensorId q = w.q_a ? c.linear(w.q_b, g.norm(c.linear(w.q_a, x), c.w(w.q_a_norm), hp_.eps))
                             : c.linear(w.q, x);
    // Per head [q_nope | q_pe].
    const TensorId q_nope = g.copy(g.view(q, {nope, nh, n}, {dq * 4, dq * nh * 4}, 0));
    const TensorId q_pe = rope(c, g.view(q, {rot, nh, n}, {dq * 4, dq * nh * 4}, static_cast<size_t>(nope * 4)), 0);
    // [c | k_pe] per token; c normalised, k_pe rotated (one for all heads).
    const TensorId kv = c.linear(w.kv_a, x);
    const TensorId lat = g.norm(g.view(kv, {rank, n}, {(rank + rot) * 4}, 0), c.w(w.kv_a_norm), hp_.eps);
    const TensorId k_pe =
        rope(c, g.view(kv, {rot, 1, n}, {(rank + rot) * 4, (rank + rot) * 4}, static_cast<size_t>(rank * 4)), 0);
    const TensorId k_full = concat(g, g.reshape(lat, rank, 1, n), k_pe, 0);  // [rank + rot, 1, n]
    // Queries in latent space: W_kb,h q_nope,h, then [q_c | q_pe].
    const TensorId q_c = g.matmul_id(c.w(w.k_b), q_nope, heads);  // [rank, nh, n]
    const TensorId q_full = concat(g, q_c, q_pe, 0);
    const auto kl = static_cast<size_t>(kv_layer);
    const TensorId kc = g.persistent(c.in.k_cache[kl], c.in.kv_device[kl]);
    const TensorId vc = g.persistent(c.in.v_cache[kl], c.in.kv_device[kl]);
    g.op(OpKind::set_rows, kc, {g.reshape(k_full, rank + rot, n), c.kv_slots});
    g.op(OpKind::set_rows, vc, {lat, c.kv_slots});
    const TensorId o = g.tensor(StorageType::F32, rank, nh, n);
    g.op(OpKind::attention, o, {q_full, kc, vc, c.positions, c.seq_rows, c.tables},
         {static_cast<int32_t>(c.in.block_size)}, {1.0f / std::sqrt(static_cast<float>(dq))});
    const TensorId v = g.matmul_id(c.w(w.v_b), o, heads);  // [v_dim, nh, n]
    return c.linear(w.o, g.reshape(v, hp_.head_dim_v_mla * nh, n));
  }

  HParams hp_;
  const Weights& weights_;
  std::deque<GraphTensor> views_;
  EmbeddingWeights emb_;
  std::vector<Layer> layers_;
  mutable std::vector<int32_t> head_ids_;  // grows to the largest ubatch, then stays
};

}  // namespace

Result<std::unique_ptr<Architecture>> make_deepseek2(const HParams& hp, const Weights& w) {
  if (hp.n_expert == 0 && hp.n_leading_dense < hp.n_layer)
    return error::invalid_argument("deepseek2.expert_count is missing or 0, but the layers after deepseek2."
                                   "leading_dense_block_count (" + std::to_string(hp.n_leading_dense) +
                                   ") route to experts");
  if (hp.kv_lora_rank <= 0 || hp.head_dim_k_mla <= hp.n_rot || hp.head_dim_v_mla <= 0 || hp.n_head_kv != 1 ||
      hp.head_dim_k != hp.kv_lora_rank + hp.n_rot || hp.head_dim_v != hp.kv_lora_rank)
    return error::invalid_argument(
        "this deepseek2 model does not describe its latent attention as expected (attention.kv_lora_rank, "
        "key_length_mla, value_length_mla, key_length = kv_lora_rank + rope dims, head_count_kv = 1)");
  auto d = std::make_unique<DeepSeek2>(hp, w);
  if (auto st = d->resolve(w); !st) return st;
  return std::unique_ptr<Architecture>(std::move(d));
}

}  // namespace sy::model
