// The scheduler: places each node of a step's graph on a device, splits the graph into
// per-device sub-graphs, plans the intermediates into per-device arenas and runs the
// sub-graphs in order. Placement follows ONNX Runtime's execution providers: a node runs
// where its weights live when that device's capability query accepts it; otherwise on the
// preferred device that does, which is a fallback — logged once, counted in the stats, and
// an error under `strict: true`. A source held in memory the chosen device cannot read is
// copied there first (a transfer the scheduler runs between sub-graphs), once per step and
// device.
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
  uint64_t arena_peak_bytes = 0;  ///< what the last graph needed at its peak (arenas grow in whole MiB)
  int64_t transfers = 0;          ///< copies between device memories, summed over steps
  uint64_t transfer_bytes = 0;
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
  Status assign(Graph& g);
  Status allocate(Graph& g);
  Status transfer(Graph& g, const GraphNode& n);
  void note_fallback(const GraphNode& n, StorageType type, int from, int to);
  [[nodiscard]] bool readable(int holder, int reader) const;
  TensorId mirror(Graph& g, TensorId src, int device);

  std::vector<Device*> devices_;
  std::vector<bool> host_visible_;
  bool strict_;
  SchedulerStats stats_;
  std::vector<uint64_t> seen_fallbacks_;
  // Per-step working vectors, kept to avoid allocation.
  std::vector<GraphNode> nodes_;   // the graph's nodes with transfers inserted
  std::vector<int> node_device_;   // per entry of nodes_; -1: a transfer
  struct Mirror {
    TensorId base;
    int device;
    TensorId copy;
  };
  std::vector<Mirror> mirrors_;
  std::vector<std::byte> staging_;
  std::vector<int> tensor_device_;
  std::vector<int32_t> last_use_;
  std::vector<size_t> offset_;
  std::vector<ArenaPlanner> planners_;
  std::vector<std::unique_ptr<Buffer>> arenas_;
};

}  // namespace sy::graph
