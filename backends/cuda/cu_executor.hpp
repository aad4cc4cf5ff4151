// Runs sub-graphs on the device's stream: finds each node's kernel, fills its record (device
// addresses, shapes, strides, parameters), uploads the records through pinned staging memory
// and launches the kernels in order, without waiting. A sub-graph whose shape key keeps
// coming back (decode steps) is captured once as a CUDA graph and replayed from then on:
// its kernels read their records from a device array of their own, refreshed before each
// replay, so the new step's buffers are used.
#pragma once

#include <mutex>
#include <vector>

#include "cu_buffer.hpp"
#include "host/graph_cache.hpp"
#include "kernels/kernel.hpp"

namespace sy::cuda {

class Executor {
 public:
  Executor(Queue& queue, Features features, std::string name, bool graphs);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  [[nodiscard]] Support supports(const GraphNode& node, std::span<const GraphTensor> tensors) const;
  Status execute(const SubGraph& g);
  [[nodiscard]] const GraphCache& graphs() const { return graphs_; }

 private:
  struct Captured {  ///< a GraphCache handle
    void* exec = nullptr;     ///< cudaGraphExec_t
    void* records = nullptr;  ///< the device array its kernels read
  };
  const KernelDef* find(const GraphNode& node, std::span<const GraphTensor> tensors, Support* answer) const;
  Status fill(NodeRecord& r, int slot, const GraphNode& n, std::span<const GraphTensor> tensors, int32_t index) const;
  Status launch_all(const NodeRecord* device_records);
  Status upload_records(void* device_records);
  Status reserve_records(size_t count);
  // Grows (never shrinks) `buf` to `bytes` in stream order: kernels queued earlier still
  // read the old allocation before it is freed.
  Status reserve(void*& buf, size_t& cap, size_t bytes, const char* what);
  void destroy(const std::vector<void*>& handles);
  Status refuse(const GraphNode& n, const std::string& what) const;

  Queue& queue_;
  Features features_;
  std::string name_;
  std::vector<std::vector<const KernelDef*>> by_op_;
  std::mutex mu_;
  std::vector<NodeRecord> records_;         ///< this call's records (host)
  std::vector<const KernelDef*> kernels_;   ///< this call's kernel per record
  std::vector<const GraphNode*> nodes_;     ///< this call's node per record
  void* device_records_ = nullptr;          ///< the eager path's record array
  size_t device_records_cap_ = 0;
  // One scratch area serves every node: the stream runs a node's kernels (a prep stage,
  // then its reader) before the next node's, so each may reuse it whole.
  void* scratch_ = nullptr;
  size_t scratch_cap_ = 0;
  GraphCache graphs_;
};

}  // namespace sy::cuda
