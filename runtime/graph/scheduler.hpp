// The scheduler: places each node of a step's graph on a device, splits the graph into
// per-device sub-graphs, plans the intermediates into per-device arenas and runs the
// sub-graphs in order. Placement follows ONNX Runtime's execution providers: a node runs
// where its weights (or cache) live, and a node without any runs on the device that
// produced its first source; the device's per-node capability query must accept it,
// otherwise the node runs on the first device in preference order that does — a
// fallback, logged once, counted in the stats, and an error under `strict: true`.
//
// Data moves by DeviceInfo's read rules: an activation the chosen device cannot read is
// copied to it (queued on that device, once per step and device). Persistent tensors
// (weights, caches) are never copied per step: a node that would need one elsewhere is an
// error naming it, since where weights live is decided at load.
//
// Devices work asynchronously; the host waits for a device only before it reads that
// device's results: before a host-reading device runs, before a copy out of it, and at the
// end of the step (the engine reads the logits).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/arena.hpp"
#include "graph/graph.hpp"
#include "graph/profile.hpp"
#include "switchyard/backend.hpp"

namespace spdlog {
class logger;
}

namespace sy::graph {

struct SchedulerStats {
  int64_t steps = 0;
  int64_t fallback_nodes = 0;     ///< nodes that ran off their preferred device, summed over steps
  int64_t distinct_fallbacks = 0; ///< distinct (op, type, device) fallbacks seen
  size_t arena_bytes = 0;         ///< current arena size, all devices together
  uint64_t arena_peak_bytes = 0;  ///< what the last graph needed at its peak (arenas grow in whole MiB)
  int64_t transfers = 0;          ///< copies between device memories, summed over steps
  uint64_t transfer_bytes = 0;
  uint64_t last_step_transfer_bytes = 0;  ///< bytes the last step moved between devices
};

class Scheduler {
 public:
  /// `devices` in order of preference (the pipeline's backend order); not owned.
  Scheduler(std::vector<Device*> devices, bool strict);

  /// Places, allocates and runs `g`. Persistent and input tensors must hold their data.
  Status run(Graph& g);
  /// Places `g` without running it: the load-time check that every node has a device
  /// (and, under strict, its own). Fallbacks found are logged and counted like a run's.
  Status plan(Graph& g);

  /// Per-node timing into `p` (nullptr: off, the default). While on, every node runs as its
  /// own sub-graph and the host waits for its device after it: slower, but each node's time
  /// is its own.
  void set_profile(OpProfile* p) { profile_ = p; }

  [[nodiscard]] const SchedulerStats& stats() const { return stats_; }
  [[nodiscard]] size_t device_count() const { return devices_.size(); }
  [[nodiscard]] Device& device(size_t i) const { return *devices_[i]; }

 private:
  Status run_queued(Graph& g);
  // The profiling path: each node (or copy) alone, timed to the end of its device's work.
  Status profiled_run(Graph& g, size_t first, size_t last);
  Status profiled_transfer(Graph& g, size_t i);
  static int64_t elapsed_ns(std::chrono::steady_clock::time_point since);
  Status assign(Graph& g);
  Status allocate(Graph& g);
  Status transfer(Graph& g, const GraphNode& n, int to);
  Status wait(int device);
  Status wait_all();
  void note_fallback(const GraphNode& n, StorageType type, int from, int to, const char* why);
  [[nodiscard]] bool readable(int holder, int reader) const;
  [[nodiscard]] int choose(const Graph& g, const GraphNode& n, int preferred);
  [[nodiscard]] int producer_device(const Graph& g, const GraphNode& n) const;
  TensorId mirror(Graph& g, TensorId src, int device);

  std::vector<Device*> devices_;
  std::vector<DeviceInfo> info_;
  int host_ = -1;  // the first device that reads host memory (where host inputs are used in place)
  bool strict_;
  std::shared_ptr<spdlog::logger> log_;  // looked up once: the per-step traces stay cheap
  SchedulerStats stats_;
  OpProfile* profile_ = nullptr;
  std::vector<uint64_t> seen_fallbacks_;
  std::vector<bool> busy_;  // per device: work queued that the host has not waited for
  // Per-step working vectors, kept to avoid allocation.
  std::vector<GraphNode> nodes_;   // the graph's nodes with transfers inserted
  std::vector<int> node_device_;   // per entry of nodes_; for a transfer, -1 - destination device
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
