// The scheduler: places each node of a step's graph on a device, splits the graph into
// per-device sub-graphs, plans the intermediates into per-device arenas and runs the
// sub-graphs in order. Placement follows ONNX Runtime's execution providers: a node runs
// where its weights live when that device's capability query accepts it; otherwise on the
// preferred device that does, which is a fallback — logged once, counted in the stats, and
// an error under `strict: true`.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/arena.hpp"
#include "graph/graph.hpp"
#include "switchyard/backend.hpp"

namespace sy::graph {

struct SchedulerStats {
  int64_t steps = 0;
  int64_t fallback_nodes = 0;     ///< nodes that ran off their preferred device, summed over steps
  int64_t distinct_fallbacks = 0; ///< distinct (op, type, device) fallbacks seen
  size_t arena_bytes = 0;         ///< current arena size, all devices together
};

class Scheduler {
 public:
  /// `devices` in order of preference (the pipeline's backend order); not owned.
  Scheduler(std::vector<Device*> devices, bool strict);

  /// Places, allocates and runs `g`. Persistent and input tensors must hold their data.
  Status run(Graph& g);

  [[nodiscard]] const SchedulerStats& stats() const { return stats_; }
  [[nodiscard]] size_t device_count() const { return devices_.size(); }
  [[nodiscard]] Device& device(size_t i) const { return *devices_[i]; }

 private:
  Status assign(const Graph& g);
  Status allocate(Graph& g);
  void note_fallback(const GraphNode& n, StorageType type, int from, int to);

  std::vector<Device*> devices_;
  std::vector<bool> host_visible_;
  bool strict_;
  SchedulerStats stats_;
  std::vector<uint64_t> seen_fallbacks_;
  // Per-step working vectors, kept to avoid allocation.
  std::vector<int> node_device_;
  std::vector<int> tensor_device_;
  std::vector<int32_t> last_use_;
  std::vector<size_t> offset_;
  std::vector<ArenaPlanner> planners_;
  std::vector<std::unique_ptr<Buffer>> arenas_;
};

}  // namespace sy::graph
