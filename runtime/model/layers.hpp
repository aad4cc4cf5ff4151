// Building blocks the architectures share: weight lookup with load-time errors, and the
// graph of an attention block, a gated delta-net block, a dense FFN and an MoE FFN.
#pragma once

#include <string>

#include "graph/graph.hpp"
#include "model/architecture.hpp"

namespace sy::model {

/// Looks weights up by name, remembering the first missing required one.
class Resolver {
 public:
  Resolver(const Weights& w, std::string arch) : w_(w), arch_(std::move(arch)) {}
  const GraphTensor* req(const std::string& name);
  const GraphTensor* opt(const std::string& name) const { return w_.find(name); }
  [[nodiscard]] Status status() const { return status_; }

 private:
  const Weights& w_;
  std::string arch_;
  Status status_ = Status::ok();
};

/// Token embeddings and the LM head (tied to the embeddings when output.weight is absent).
struct EmbeddingWeights {
  const GraphTensor *tok_embd = nullptr, *out_norm = nullptr, *output = nullptr;
};
struct AttentionWeights {
  const GraphTensor *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  const GraphTensor *bq = nullptr, *bk = nullptr, *bv = nullptr;
  const GraphTensor *q_norm = nullptr, *k_norm = nullptr;
};
struct DeltaNetWeights {
  const GraphTensor *qkv = nullptr, *z = nullptr, *conv = nullptr, *dt_bias = nullptr, *a = nullptr;
  const GraphTensor *beta = nullptr, *alpha = nullptr, *norm = nullptr, *out = nullptr;
};
struct FfnWeights {
  const GraphTensor *gate = nullptr, *up = nullptr, *down = nullptr;
};
struct MoeWeights {
  const GraphTensor *router = nullptr, *gate = nullptr, *up = nullptr, *down = nullptr;
  FfnWeights shared;
  const GraphTensor* shared_gate = nullptr;  ///< sigmoid gate of the shared expert, optional
  const GraphTensor* select_bias = nullptr;  ///< added to the scores for choosing only (deepseek)
};
/// How the router turns logits into expert choices and weights.
struct RouterConfig {
  bool sigmoid = false;    ///< sigmoid scores instead of a softmax
  bool renormalise = true; ///< chosen weights sum to 1
  float scale = 1.f;       ///< then multiplied by this
};
struct LayerWeights {
  const GraphTensor *attn_norm = nullptr, *ffn_norm = nullptr;
  bool full = true;
  AttentionWeights attn;
  DeltaNetWeights delta;
  FfnWeights ffn;
  MoeWeights moe;
};

EmbeddingWeights resolve_embeddings(Resolver& r);
AttentionWeights resolve_attention(Resolver& r, const std::string& prefix);
DeltaNetWeights resolve_delta(Resolver& r, const std::string& prefix);
FfnWeights resolve_ffn(Resolver& r, const std::string& prefix, const std::string& suffix);
MoeWeights resolve_moe(Resolver& r, const std::string& prefix);

/// One step's graph under construction, with the engine's inputs bound as tensors.
struct Ctx {
  graph::Graph& g;
  const StepInputs& in;
  const HParams& hp;
  int dev;
  graph::TensorId tokens = -1, positions = -1, kv_slots = -1, seq_rows = -1, tables = -1, state_slots = -1,
                  out_rows = -1;

  void bind_inputs();
  /// A weight as a graph tensor.
  graph::TensorId w(const GraphTensor* t) const { return g.persistent(*t, dev); }
};

/// Final norm and LM head: the logits [n_vocab, rows of x], marked as the graph's output.
graph::TensorId lm_head(Ctx& c, const EmbeddingWeights& w, graph::TensorId x);
/// Self-attention over the paged KV cache of full-attention layer `kv_layer`.
/// rope_mode 0: adjacent pairs, 1: neox. gated: q carries a per-head output gate (qwen35moe).
graph::TensorId attention(Ctx& c, const AttentionWeights& w, graph::TensorId x, int64_t kv_layer, int rope_mode,
                          bool gated);
/// Gated delta-net linear attention with the state of linear layer `state_layer`.
graph::TensorId delta_net(Ctx& c, const DeltaNetWeights& w, graph::TensorId x, int64_t state_layer);
/// SwiGLU feed-forward.
graph::TensorId ffn(Ctx& c, const FfnWeights& w, graph::TensorId x);
/// Routed experts (softmax router, top-k) plus the optional shared expert.
graph::TensorId moe(Ctx& c, const MoeWeights& w, graph::TensorId x, const RouterConfig& r);
/// A new tensor [a | b] along dimension `dim`.
graph::TensorId concat(graph::Graph& g, graph::TensorId a, graph::TensorId b, int dim);
/// Rotary embedding of x [dims, heads, tokens] with the model's parameters.
graph::TensorId rope(Ctx& c, graph::TensorId x, int mode);

}  // namespace sy::model
