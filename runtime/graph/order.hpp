// The order a step's nodes are queued in. The graph comes in the order the architecture
// declared it, which interleaves host and device work as the model reads; a device that
// queues work (a GPU) and the host, which runs work as it is called, only overlap when
// device work that does not need the host's results is queued before the host starts.
// With routed experts in RAM this puts a layer's shared expert (and the copies of the
// router's results out) on the GPU's queue before the CPU computes the routed experts.
//
// The reordering is a list schedule over the nodes' true dependencies (read after write,
// write after read, write after write, on whole tensors, and on persistent memory such as
// a KV cache by its buffer): among the nodes whose inputs are ready, the earliest in graph
// order that runs on a queueing device goes first, else the earliest host node. A graph
// whose nodes all run on one kind of device keeps its order.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "graph/graph.hpp"

namespace sy::graph {

/// The source an op updates in place (graph.hpp's table), or -1: conv1d's and
/// delta_net's recurrent state, and attention's K cache (which placement follows).
int in_place_source(OpKind op);

class OverlapOrder {
 public:
  /// Reorders `nodes` and `device` (the device index per node; a copy between devices is
  /// -1 - its destination) together. `queues[d]` is non-zero when device d queues work
  /// and returns; copies count as queued work. Returns whether the order changed. Keeps
  /// every vector's capacity, so steady-state steps do not touch the heap.
  bool apply(const Graph& g, std::vector<GraphNode>& nodes, std::vector<int>& device, std::span<const uint8_t> queues);

 private:
  int32_t resource(const Graph& g, TensorId t) const;
  void depend(int32_t from, int32_t to);

  std::vector<const void*> written_memory_;  // persistent memory some node writes, sorted
  std::vector<int32_t> last_writer_;         // per resource
  std::vector<int32_t> readers_head_;        // per resource: readers since the last write
  std::vector<std::pair<int32_t, int32_t>> readers_;  // (node, next) lists
  std::vector<std::pair<int32_t, int32_t>> edges_;    // (from, to)
  std::vector<int32_t> succ_begin_, succ_, indegree_, order_, ready_queued_, ready_host_;
  std::vector<GraphNode> nodes_tmp_;
  std::vector<int> device_tmp_;
};

}  // namespace sy::graph
