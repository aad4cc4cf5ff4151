// An architecture turns one step (a batch of tokens from one or more sequences) into a
// compute graph ending in logits. Each is built once per model, resolving every weight it
// needs up front, so a missing tensor is a load-time error naming it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graph/graph.hpp"
#include "model/hparams.hpp"
#include "model/weights.hpp"

namespace sy::model {

/// A linear's input kept by a step (StepInputs::linear_taps): the weight, the graph tensor
/// its product reads ([cols, rows...], before any static quantization or reordering) and,
/// for a stack of experts (matmul_id), the ids tensor choosing each row's expert.
struct LinearTap {
  const GraphTensor* weight = nullptr;
  graph::TensorId x = -1;
  graph::TensorId ids = -1;
};

/// What the engine provides for one step. Index arrays have one entry per token, except
/// out_rows (n_outputs) and block_tables (table_blocks x table_rows). Tokens of a sequence
/// are consecutive.
struct StepInputs {
  int64_t n_tokens = 0, n_outputs = 0;
  const int32_t* tokens = nullptr;
  const int32_t* positions = nullptr;
  const int32_t* kv_slots = nullptr;     ///< cache cell each token's K/V is written to
  const int32_t* seq_rows = nullptr;     ///< block-table row of each token's sequence
  const int32_t* state_slots = nullptr;  ///< recurrent-state slot of each token's sequence
  const int32_t* out_rows = nullptr;     ///< tokens whose logits are wanted, ascending
  const int32_t* block_tables = nullptr;
  int64_t table_blocks = 0, table_rows = 0, block_size = 0;
  std::span<const GraphTensor> k_cache, v_cache;         ///< per full-attention layer
  std::span<const GraphTensor> conv_state, delta_state;  ///< per linear-attention layer
  std::span<const int> kv_device;     ///< device of each full-attention layer's K/V
  std::span<const int> state_device;  ///< device of each linear-attention layer's state
  /// Tap each MoE layer's chosen expert ids (graph taps, in layer order) and run every
  /// token through the last layer, so routing statistics cover the whole batch.
  bool tap_routing = false;
  /// When set, every linear's input (and for a stack of experts, the chosen ids) is kept as
  /// a graph output and listed here, for an importance matrix (`switchyard imatrix`).
  std::vector<LinearTap>* linear_taps = nullptr;
  /// Every token runs through the last layer (routing statistics and importance matrices
  /// cover the whole batch, not only the rows whose logits are wanted).
  [[nodiscard]] bool all_rows() const { return tap_routing || linear_taps != nullptr; }
};

class Architecture {
 public:
  virtual ~Architecture() = default;
  /// Appends the step's nodes to g and returns the logits [n_vocab, n_outputs].
  virtual graph::TensorId build(graph::Graph& g, const StepInputs& in) const = 0;
};

/// The architecture named by hp.arch, with its weights resolved; an unknown
/// architecture or a missing tensor is an error naming it.
Result<std::unique_ptr<Architecture>> make_architecture(const HParams& hp, const Weights& w);
/// Whether a model of these hyper-parameters and tensors would load: every tensor the
/// architecture needs is there with the shape its hyper-parameters give (no data is read).
Status check_layout(const HParams& hp, std::span<const TensorDesc> tensors);
/// DeepSeek-V2/V3 style: multi-head latent attention, dense then routed layers.
Result<std::unique_ptr<Architecture>> make_deepseek2(const HParams& hp, const Weights& w);

}  // namespace sy::model
