// Turns a sub-graph into kernel launches: per node the first kernel that accepts it, the
// node's record (tensor addresses, shapes, strides, parameters), and its pipeline.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "vk_pipelines.hpp"
#include "vk_queue.hpp"

namespace sy::vulkan {

class Executor {
 public:
  Executor(Context& ctx, Pipelines& pipelines, Queue& queue);
  /// The first kernel's answer for the node's op, or no.
  Support supports(const GraphNode& node, std::span<const GraphTensor> tensors) const;
  /// Queues every node of `g`; nothing is queued when any node cannot run.
  Status execute(const SubGraph& g);

 private:
  /// The first kernel that accepts the node, with its answer (no, and nullptr, when none does).
  const KernelDef* find(const GraphNode& node, std::span<const GraphTensor> tensors, Support* answer) const;
  Status fill(NodeRecord& r, int slot, const GraphNode& n, std::span<const GraphTensor> tensors, int32_t index) const;
  /// Makes scratch_ hold at least `bytes`.
  Status reserve_scratch(uint64_t bytes);

  Context& ctx_;
  Pipelines& pipelines_;
  Queue& queue_;
  std::vector<std::vector<const KernelDef*>> by_op_;  ///< all_kernels() grouped by op, in order
  std::mutex mu_;                                     ///< execute() from two threads takes turns
  std::vector<Dispatch> launches_;                    ///< reused from step to step
  /// Device memory for prep shaders' outputs (Launch::scratch_bytes), shared by every node:
  /// the queue's barrier before each dispatch orders a node's prep after the previous
  /// node's main shader (in this and earlier submissions), so one region serves them all.
  std::unique_ptr<RawBuffer> scratch_;
};

}  // namespace sy::vulkan
