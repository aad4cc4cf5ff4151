// Building blocks the architectures share: weight lookup with load-time errors, and the
// graph of an attention block, a gated delta-net block, a dense FFN and an MoE FFN.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "model/architecture.hpp"

namespace sy::model {

/// One expected dimension of a weight: its size and the hyper-parameters it comes from,
/// e.g. {256, "llama.attention.head_count = 4 x llama.attention.key_length = 64"}.
struct Dim {
  int64_t n = 0;
  std::string from;
};
using Shape = std::vector<Dim>;

/// Looks weights up by name and checks their shapes against the hyper-parameters (as
/// llama.cpp's loader does), remembering the first problem as a sentence naming the tensor,
/// its shape and the keys that say otherwise. Views (rows of a fused tensor) live in
/// `views`, which must outlive the architecture.
class Resolver {
 public:
  Resolver(const Weights& w, std::string arch, std::deque<GraphTensor>& views)
      : w_(w), arch_(std::move(arch)), views_(views) {}
  /// A tensor the architecture needs, of this shape.
  const GraphTensor* req(const std::string& name, const Shape& shape);
  /// A tensor the architecture can do without; checked when present.
  const GraphTensor* opt(const std::string& name, const Shape& shape);
  /// The same for norms, biases and convolution kernels, which elementwise ops read as F32
  /// (llama.cpp's converters always write them so).
  const GraphTensor* req_f32(const std::string& name, const Shape& shape);
  const GraphTensor* opt_f32(const std::string& name, const Shape& shape);
  [[nodiscard]] bool has(const std::string& name) const { return w_.find(name) != nullptr; }
  /// Rows [first, first + n) of a matrix, or elements of a vector: a view, no copy.
  const GraphTensor* rows(const GraphTensor* t, int64_t first, int64_t n);
  void fail(const std::string& why) {
    if (status_) status_ = error::invalid_argument(why);
  }
  [[nodiscard]] Status status() const { return status_; }
  [[nodiscard]] const std::string& arch() const { return arch_; }

 private:
  bool check(const std::string& name, const GraphTensor& t, const Shape& shape);
  bool check_f32(const std::string& name, const GraphTensor* t);

  const Weights& w_;
  std::string arch_;
  std::deque<GraphTensor>& views_;
  Status status_ = Status::ok();
};

/// The model's named dimensions as Dims, for the shapes of its weights.
struct Dims {
  const HParams& hp;
  [[nodiscard]] std::string key(const std::string& k, int64_t v) const {
    return hp.arch + "." + k + " = " + std::to_string(v);
  }
  [[nodiscard]] Dim embd() const { return {hp.n_embd, key("embedding_length", hp.n_embd)}; }
  [[nodiscard]] Dim vocab() const { return {hp.n_vocab, "the vocabulary (token_embd.weight) = " + std::to_string(hp.n_vocab)}; }
  [[nodiscard]] Dim head_k() const { return {hp.head_dim_k, key("attention.key_length", hp.head_dim_k)}; }
  /// Query rows: heads x head size (x 2 when q carries a per-head output gate).
  [[nodiscard]] Dim q(bool gated) const {
    return {hp.n_head * hp.head_dim_k * (gated ? 2 : 1),
            (gated ? "2 x " : "") + key("attention.head_count", hp.n_head) + " x " +
                key("attention.key_length", hp.head_dim_k)};
  }
  [[nodiscard]] Dim k() const {
    return {hp.n_head_kv * hp.head_dim_k,
            key("attention.head_count_kv", hp.n_head_kv) + " x " + key("attention.key_length", hp.head_dim_k)};
  }
  [[nodiscard]] Dim v() const {
    return {hp.n_head_kv * hp.head_dim_v,
            key("attention.head_count_kv", hp.n_head_kv) + " x " + key("attention.value_length", hp.head_dim_v)};
  }
  [[nodiscard]] Dim o() const {
    return {hp.n_head * hp.head_dim_v,
            key("attention.head_count", hp.n_head) + " x " + key("attention.value_length", hp.head_dim_v)};
  }
  [[nodiscard]] Dim ff() const { return {hp.n_ff, key("feed_forward_length", hp.n_ff)}; }
  [[nodiscard]] Dim ff_exp() const { return {hp.n_ff_exp, key("expert_feed_forward_length", hp.n_ff_exp)}; }
  /// The shared expert's width; llama.cpp falls back to feed_forward_length without the key.
  [[nodiscard]] Dim ff_shexp() const {
    if (hp.n_ff_shexp == 0) return ff();
    return {hp.n_ff_shexp, "the shared experts' width (" + hp.arch + ".expert_shared_feed_forward_length, or " +
                               hp.arch + ".expert_shared_count x the expert width) = " + std::to_string(hp.n_ff_shexp)};
  }
  [[nodiscard]] Dim experts() const { return {hp.n_expert, key("expert_count", hp.n_expert)}; }
  [[nodiscard]] static Dim one() { return {1, "1"}; }
};

/// Token embeddings and the LM head (tied to the embeddings when output.weight is absent).
struct EmbeddingWeights {
  const GraphTensor *tok_embd = nullptr, *out_norm = nullptr, *output = nullptr, *output_bias = nullptr;
};
struct AttentionWeights {
  const GraphTensor *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  const GraphTensor *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;
  const GraphTensor *q_norm = nullptr, *k_norm = nullptr;
};
struct DeltaNetWeights {
  const GraphTensor *qkv = nullptr, *z = nullptr, *conv = nullptr, *dt_bias = nullptr, *a = nullptr;
  const GraphTensor *beta = nullptr, *alpha = nullptr, *norm = nullptr, *out = nullptr;
};
struct FfnWeights {
  const GraphTensor *gate = nullptr, *up = nullptr, *down = nullptr;
  const GraphTensor *b_gate = nullptr, *b_up = nullptr, *b_down = nullptr;
};
struct MoeWeights {
  const GraphTensor *router = nullptr, *gate = nullptr, *up = nullptr, *down = nullptr;
  const GraphTensor* gate_up = nullptr;  ///< fused [gate | up] per expert (ffn_gate_up_exps), else null
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

EmbeddingWeights resolve_embeddings(Resolver& r, const Dims& d);
/// rope_freqs.weight, the per-pair RoPE frequency factors of Llama 3.1+ files (F32,
/// rope.dimension_count / 2 values), or null when the file has none. `applied`: whether
/// llama.cpp applies them for this architecture; where it does not, a file carrying them
/// is refused naming the tensor.
const GraphTensor* resolve_rope_freqs(Resolver& r, const Dims& d, bool applied);
/// Fused attn_qkv (split into row views) or separate q/k/v, with optional biases.
AttentionWeights resolve_attention(Resolver& r, const Dims& d, const std::string& prefix, bool gated_q);
DeltaNetWeights resolve_delta(Resolver& r, const HParams& hp, const std::string& prefix);
FfnWeights resolve_ffn(Resolver& r, const Dims& d, const std::string& prefix, const std::string& suffix, const Dim& width);
/// Routed experts (fused ffn_gate_up_exps or split gate/up) and the optional shared expert.
MoeWeights resolve_moe(Resolver& r, const Dims& d, const std::string& prefix);

/// One step's graph under construction, with the engine's inputs bound as tensors.
struct Ctx {
  graph::Graph& g;
  const StepInputs& in;
  const HParams& hp;
  const Weights& weights;
  graph::TensorId tokens = -1, positions = -1, kv_slots = -1, seq_rows = -1, tables = -1, state_slots = -1,
                  out_rows = -1;
  /// RoPE frequency factors every rope() applies, or null.
  const GraphTensor* rope_freqs = nullptr;
  /// static_input()'s results: (input, first scale of the group) -> quantized input.
  struct Quantized {
    graph::TensorId x;
    const GraphTensor* scale;
    graph::TensorId q;
  };
  mutable std::vector<Quantized> quantized;

  void bind_inputs();
  /// A weight as a graph tensor.
  graph::TensorId w(const GraphTensor* t) const { return g.persistent(*t, weights.device_of(*t)); }
  /// x gathered into the input order `weight`'s columns are stored in (act-order GPTQ);
  /// x itself for every other weight.
  graph::TensorId ordered_input(const GraphTensor* weight, graph::TensorId x) const;
  /// x quantized to FP8 with the static activation scale of `weight` and the linears that
  /// share its input (format.fp8_activations: static; Weights::input_scales), once per input
  /// and scale group, so a gate and up projection still read one tensor; x itself otherwise.
  graph::TensorId static_input(const GraphTensor* weight, graph::TensorId x) const;
  /// What `weight`'s product reads: x statically quantized, then gathered, where they apply.
  graph::TensorId linear_input(const GraphTensor* weight, graph::TensorId x) const {
    return ordered_input(weight, static_input(weight, x));
  }
  /// weight x, with the input prepared by linear_input().
  graph::TensorId linear(const GraphTensor* weight, graph::TensorId x) const {
    tap(weight, x, -1);
    return g.matmul(w(weight), linear_input(weight, x));
  }
  /// The same for a stack of experts: each row of x through the expert `ids` chose.
  graph::TensorId expert_linear(const GraphTensor* weight, graph::TensorId x, graph::TensorId ids) const {
    tap(weight, x, ids);
    return g.matmul_id(w(weight), linear_input(weight, x), ids);
  }
  /// Keeps a linear's input when the step collects them (StepInputs::linear_taps).
  void tap(const GraphTensor* weight, graph::TensorId x, graph::TensorId ids) const;
  /// A weight shared by every layer, from its copy on `device` when there is one.
  graph::TensorId w_on(const GraphTensor* t, int device) const { return w(weights.on_device(t, device)); }
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
/// Rotary embedding of x [dims, heads, tokens] with the model's parameters (and c.rope_freqs,
/// read from its copy on `device`, the layer's, when it is given).
graph::TensorId rope(Ctx& c, graph::TensorId x, int mode, int device = -1);

}  // namespace sy::model
