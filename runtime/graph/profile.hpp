// Per-op timing of graph steps (`switchyard bench --profile`): where a step's time goes,
// summed per (op, deciding storage type, device). The scheduler fills it when profiling is
// on (Scheduler::set_profile); it then runs every node alone and waits for its device, so a
// profiled step is slower than a normal one, and the figures are shares, not speeds.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/graph.hpp"

namespace sy::graph {

/// The pseudo-op name under which copies between device memories are counted.
inline constexpr std::string_view kTransferOp = "transfer";

struct OpProfileEntry {
  std::string op;         ///< op_name() of the node's op, or kTransferOp
  StorageType type = StorageType::F32;  ///< the storage type that decides its kernel
  int device = -1;        ///< index in the scheduler's device order
  std::string device_name;
  int64_t nodes = 0;      ///< nodes run, summed over the steps profiled
  int64_t ns = 0;         ///< execute + synchronize, steady clock
  uint64_t weight_bytes = 0;  ///< weight bytes touched (matmul, matmul_id, get_rows); transfers: bytes moved
  uint64_t flops = 0;         ///< multiply-adds x 2 of matmul and matmul_id (prefill is compute-bound)
};

class OpProfile {
 public:
  /// Adds one node's time to its (op, type, device) entry.
  void add(std::string_view op, StorageType type, int device, std::string_view device_name, int64_t ns,
           uint64_t weight_bytes, uint64_t flops = 0);
  void clear() { entries_.clear(); }
  /// In first-seen order.
  [[nodiscard]] const std::vector<OpProfileEntry>& entries() const { return entries_; }
  [[nodiscard]] int64_t total_ns() const;
  [[nodiscard]] int64_t total_nodes() const;
  /// Node count of one op summed over types and devices (0 when absent).
  [[nodiscard]] int64_t nodes_of(std::string_view op) const;

 private:
  std::vector<OpProfileEntry> entries_;
};

/// The type a node is reported under: the weights' for matmul, matmul_id and get_rows, the
/// cache's for attention (src1) and set_rows (dst), else the first source neither f32 nor
/// i32, else f32 (the CPU executor picks kernels the same way).
StorageType deciding_type(const GraphNode& n, std::span<const GraphTensor> tensors);

/// Weight bytes a node reads: a matmul's whole weight tensor, a matmul_id's distinct
/// experts x one expert's bytes (read from its ids, which must be on the host and computed;
/// when they are not, every expert counts), a get_rows' rows looked up; 0 for other ops.
uint64_t weight_bytes_read(const GraphNode& n, std::span<const GraphTensor> tensors);

/// Floating-point operations of a matmul or matmul_id (2 per multiply-add: 2 x the weights'
/// row length x the outputs); 0 for other ops.
uint64_t matmul_flops(const GraphNode& n, std::span<const GraphTensor> tensors);

}  // namespace sy::graph
