// The engine: decodes batches of tokens from one or more sequences. A batch is split into
// ubatches; each becomes one graph (built by the architecture, run by the scheduler), and
// logits come back only for the tokens that asked for them. Every buffer is kept between
// steps, so steady-state decode does not allocate.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <memory>
#include <span>
#include <vector>

#include "graph/scheduler.hpp"
#include "kv/kv_cache.hpp"
#include "model/model.hpp"

namespace sy::engine {

struct EngineConfig {
  kv::KvConfig kv;
  int64_t ubatch = 512;  ///< most tokens per graph
  bool strict = false;   ///< fallbacks are errors
  bool routing_stats = false;  ///< count how often each MoE layer picks each expert
};

/// One linear's input in a step (Engine::observe_linears): `rows` rows of `cols` floats
/// and, for a stack of experts, the expert each row went through.
struct LinearInput {
  std::string_view weight;  ///< the weight's tensor name
  int64_t cols = 0, rows = 0;
  std::span<const float> x;            ///< rows * cols, row after row
  std::span<const int32_t> experts;    ///< per row, for a stack of experts; else empty
  int64_t n_experts = 0;               ///< the stack's size; 0 for a plain matrix
};
using LinearObserver = std::function<Status(const LinearInput&)>;

struct BatchToken {
  int32_t seq = 0;
  int32_t id = 0;
  bool logits = false;  ///< return this position's logits
};

class Engine {
 public:
  /// `devices` in order of preference (the indices the model's placement uses); each
  /// layer's cache goes to its layer's device. Every node of a one-token step is placed
  /// here once, so a node no device runs (or, under strict, one that would fall back) is a
  /// load-time error.
  static Result<std::unique_ptr<Engine>> create(const model::Model& m, std::vector<Device*> devices,
                                                const EngineConfig& cfg);

  /// Appends the tokens to their sequences (each sequence's tokens consecutive, the
  /// sequences already added to kv()). `logits` receives n_vocab floats per token that
  /// asked, in batch order. All or nothing: the cache cells of the whole batch are reserved
  /// first, and on any error every sequence is rolled back to its length before the call
  /// (a sequence with recurrent state whose state had already advanced is emptied instead,
  /// to be recomputed by its owner).
  Status decode(std::span<const BatchToken> batch, std::vector<float>& logits);

  /// Hands the input of every linear of the following steps to `fn` (empty: off), after
  /// each ubatch runs; an error from `fn` fails the decode. Linears whose weight is a view
  /// of a fused tensor, and inputs that are not F32, are not reported.
  void observe_linears(LinearObserver fn) { observer_ = std::move(fn); }

  /// Times every node of the following steps into `p` (nullptr: off); see Scheduler::set_profile.
  void set_profile(graph::OpProfile* p) { sched_.set_profile(p); }

  [[nodiscard]] kv::KvCache& kv() { return *kv_; }
  [[nodiscard]] const kv::KvCache& kv_cache() const { return *kv_; }
  [[nodiscard]] const graph::SchedulerStats& stats() const { return sched_.stats(); }
  [[nodiscard]] const model::Model& model() const { return model_; }
  [[nodiscard]] int64_t n_vocab() const { return model_.hparams().n_vocab; }
  /// With EngineConfig::routing_stats: per MoE layer (in layer order), how many tokens chose
  /// each expert so far.
  [[nodiscard]] const std::vector<std::vector<uint64_t>>& routing_counts() const { return routing_; }

 private:
  Engine(const model::Model& m, std::vector<Device*> devices, const EngineConfig& cfg);
  struct Mark {
    int32_t seq;
    int64_t length;  // before the batch
    size_t first;    // its first token's index in the batch
  };
  Status reserve(std::span<const BatchToken> batch, std::vector<Mark>& marks);
  void rollback(std::span<const Mark> marks, size_t ran_until);
  Status ubatch(size_t first, size_t n, float* logits);
  Status check_placement();
  Result<bool> caches_to_move(std::vector<int>& layer_device);
  void build_probe(int64_t n_tokens);
  void bind_cache(model::StepInputs& in) const;

  const model::Model& model_;
  EngineConfig cfg_;
  graph::Scheduler sched_;
  std::unique_ptr<kv::KvCache> kv_;
  graph::Graph graph_;
  std::vector<int32_t> tokens_, positions_, cells_, rows_, slots_, outs_;
  std::vector<uint8_t> wants_;  // per batch token: return its logits
  std::vector<Mark> marks_;     // the batch's sequences and their lengths before it
  int32_t dummy_out_ = 0;
  std::vector<std::vector<uint64_t>> routing_;
  std::vector<int32_t> ids_;
  std::vector<int32_t> probe_;  // inputs of the load-time placement probe
  LinearObserver observer_;
  std::vector<model::LinearTap> linear_taps_;
  std::vector<std::byte> tap_bytes_;
  std::vector<float> tap_rows_;
  std::vector<int32_t> tap_experts_;
  Status count_routing();
  Status report_linears();
  Status read_tensor(const GraphTensor& t, std::vector<std::byte>& out);
};

}  // namespace sy::engine
