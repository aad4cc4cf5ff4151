// Runs a sub-graph of the op IR on the CPU: each node dispatches to the kernels in
// kernels/ and ops/. Scratch memory (converted activations, gathered expert rows) grows to
// the largest step seen and is then reused, so steady-state decode does not allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "attention.hpp"
#include "isa.hpp"
#include "matmul_id.hpp"
#include "ops.hpp"
#include "switchyard/graph.hpp"
#include "switchyard/status.hpp"
#include "thread_pool.hpp"

namespace sy::cpu {

class Executor {
 public:
  /// `repack`: whether to accept interleaved weight types (the loader repacks weights into
  /// them only when the device says it supports them).
  Executor(Isa isa, ThreadPool& pool, bool repack = true) : isa_(isa), pool_(pool), repack_(repack) {}

  /// Executes every node in order; the first failing node stops the run with its error.
  Status run(const SubGraph& g);

  /// Whether this executor runs the node (its tensors index `tensors`).
  [[nodiscard]] bool supports(const GraphNode& node, std::span<const GraphTensor> tensors) const;

 private:
  Status node(const SubGraph& g, const GraphNode& n);
  Status matmul_node(const GraphTensor& w, const GraphTensor& x, const GraphTensor& y);
  Status matmul_id_node(const GraphTensor& w, const GraphTensor& x, const GraphTensor& ids, const GraphTensor& y);
  /// Runs nodes i, i + 1 (and i + 2) fused when they are a gate/up pair (and its SwiGLU);
  /// `used` is how many nodes it ran, 0 when the peephole does not apply.
  Status gate_up_nodes(const SubGraph& g, size_t i, size_t& used);
  Status attention_node(const SubGraph& g, const GraphNode& n);
  Status conv1d_node(const SubGraph& g, const GraphNode& n);
  Status delta_net_node(const SubGraph& g, const GraphNode& n);

  Isa isa_;
  ThreadPool& pool_;
  bool repack_;
  std::vector<uint8_t> scratch_;   // converted activations
  MatmulIdScratch id_scratch_;
  AttentionScratch attn_scratch_;
  std::vector<float> row_;         // one row for conversions
  OpScratch ops_;
};

}  // namespace sy::cpu
