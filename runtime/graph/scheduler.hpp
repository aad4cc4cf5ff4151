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
// device's results, and then only for the queued work that made them (an event recorded
// after it): before a host-reading device runs, before a copy out of it, and at the end of
// the step (the engine reads the logits). Nodes are queued in an order that puts device
// work the host does not feed first (graph/order.hpp), so with experts in RAM the GPU's
// shared expert runs while the CPU computes the routed ones.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "graph/arena.hpp"
#include "graph/graph.hpp"
#include "graph/order.hpp"
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
  // Events: a host read waits for the queued work that made its input, not for the work
  // queued after it (that keeps running beside the host).
  void mark_host_reads(const Graph& g);
  void note_ready(int device, TensorId base);
  Status wait_ready(TensorId base);
  Status wait_inputs(const Graph& g, size_t first, size_t last);
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
  std::vector<uint8_t> queues_;     // per device: queues work and returns (not the host)
  std::vector<uint64_t> recorded_;  // per device: the last event recorded
  std::vector<uint64_t> waited_;    // per device: the last event the host waited for
  int last_event_device_ = -1;      // recorded_ covers everything queued there since...
  bool last_event_stale_ = true;    // ...unless work was queued after it
  OverlapOrder order_;
  bool reorder_ = true;
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
  std::vector<uint8_t> host_reads_;     // per tensor base: a host node (or host copy) reads it
  std::vector<int32_t> ready_device_;   // per tensor base: the device whose queued work makes it
  std::vector<uint64_t> ready_event_;   // ... and the event after that work
  std::vector<int32_t> last_use_;
  std::vector<size_t> offset_;
  std::vector<ArenaPlanner> planners_;
  std::vector<std::unique_ptr<Buffer>> arenas_;
};

}  // namespace sy::graph
