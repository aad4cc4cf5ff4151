#include "cu_executor.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "switchyard/ops.hpp"
#include "switchyard/quant.hpp"

namespace sy::cuda {
namespace {

// Kernels read 4-byte types as float/int32 and f16/bf16 as 16-bit values (blocks byte by
// byte): an offset that breaks that alignment would fault the whole context, so such a
// tensor is refused up front (device allocations themselves are 256-byte aligned).
bool offset_aligned(const GraphTensor& t) {
  if (!t.buffer) return true;  // capability questions before memory is assigned
  const auto* info = storage_type_info(static_cast<uint32_t>(t.type));
  const size_t a = info && info->block_size == 1 ? info->block_bytes : 1;
  return a <= 1 || t.offset % std::min<size_t>(a, 4) == 0;
}

// Graphs held per device: decode runs a few sub-graphs per layer kind, and each graph holds
// its record array and the driver's copy of the launches.
constexpr size_t kGraphCapacity = 256;
// A shape is captured on its second appearance: the first step after a change is eager.
constexpr uint32_t kGraphWarmup = 2;

}  // namespace

Executor::Executor(Queue& queue, Features features, std::string name, bool graphs)
    : queue_(queue), features_(features), name_(std::move(name)), graphs_(kGraphWarmup, graphs ? kGraphCapacity : 0) {
  by_op_.resize(all_ops().size());
  for (const KernelDef* k : all_kernels())
    if (static_cast<size_t>(k->op) < by_op_.size()) by_op_[static_cast<size_t>(k->op)].push_back(k);
}

Executor::~Executor() {
  (void)queue_.synchronize();
  destroy(graphs_.clear());
  if (device_records_) cudaFreeAsync(device_records_, queue_.stream());
  if (scratch_) cudaFreeAsync(scratch_, queue_.stream());
}

void Executor::destroy(const std::vector<void*>& handles) {
  for (void* h : handles) {
    auto* c = static_cast<Captured*>(h);
    if (c->exec) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(c->exec));
    if (c->records) cudaFreeAsync(c->records, queue_.stream());
    delete c;
  }
}

Status Executor::refuse(const GraphNode& n, const std::string& what) const {
  return error::invalid_argument(name_ + ": " + std::string(op_name(n.op)) + ": " + what);
}

const KernelDef* Executor::find(const GraphNode& node, std::span<const GraphTensor> tensors, Support* answer) const {
  *answer = Support::no;
  if (static_cast<size_t>(node.op) >= by_op_.size() || node.dst < 0 || static_cast<size_t>(node.dst) >= tensors.size())
    return nullptr;
  for (int s = 0; s < kMaxSources; ++s)
    if (node.src[s] >= 0 && static_cast<size_t>(node.src[s]) >= tensors.size()) return nullptr;
  if (!offset_aligned(tensors[static_cast<size_t>(node.dst)])) return nullptr;
  for (int s = 0; s < kMaxSources; ++s)
    if (node.src[s] >= 0 && !offset_aligned(tensors[static_cast<size_t>(node.src[s])])) return nullptr;
  for (const KernelDef* k : by_op_[static_cast<size_t>(node.op)]) {
    if (!k->path.empty() && features_.portable_only) continue;
    if ((*answer = k->supports(node, tensors, features_)) != Support::no) return k;
  }
  return nullptr;
}

Support Executor::supports(const GraphNode& node, std::span<const GraphTensor> tensors) const {
  Support answer;
  find(node, tensors, &answer);
  return answer;
}

Status Executor::fill(NodeRecord& r, int slot, const GraphNode& n, std::span<const GraphTensor> tensors,
                      int32_t index) const {
  const GraphTensor& t = tensors[static_cast<size_t>(index)];
  const std::string which = slot == 0 ? "the destination" : "source " + std::to_string(slot - 1);
  const auto* cb = dynamic_cast<const CudaBuffer*>(t.buffer);
  if (!cb || &cb->queue() != &queue_)
    return refuse(n, which + (t.buffer ? " is in memory of another device" : " is host memory") + "; it must be in a buffer of " +
                         name_ + " (the scheduler copies it there)");
  if (!cb->device_address()) return refuse(n, which + " is in a staging buffer, which kernels cannot read");
  if (!cb->covers(t.offset, static_cast<size_t>(tensor_extent(t))))
    return refuse(n, which + " reaches past the end of its " + std::to_string(cb->size()) + "-byte buffer");
  r.addr[slot] = reinterpret_cast<uintptr_t>(cb->device_address()) + t.offset;
  r.type[slot] = static_cast<uint32_t>(t.type);
  for (int d = 0; d < 4; ++d) {
    r.ne[slot][d] = t.ne[d];
    r.nb[slot][d] = t.ne[d] > 1 ? t.nb[d] : 0;  // a size-1 dimension is never stepped over
  }
  return Status::ok();
}

Status Executor::reserve(void*& buf, size_t& cap, size_t bytes, const char* what) {
  if (bytes <= cap) return Status::ok();
  const size_t want = std::max(bytes, 2 * cap);
  if (buf) cudaFreeAsync(buf, queue_.stream());
  buf = nullptr;
  cap = 0;
  if (auto st = queue_.check(cudaMallocAsync(&buf, want, queue_.stream()), what); !st) return st;
  cap = want;
  return Status::ok();
}

Status Executor::reserve_records(size_t count) {
  size_t cap_bytes = device_records_cap_ * sizeof(NodeRecord);
  auto st = reserve(device_records_, cap_bytes, count * sizeof(NodeRecord), "allocating node records");
  device_records_cap_ = cap_bytes / sizeof(NodeRecord);
  return st;
}

Status Executor::upload_records(void* device_records) {
  return queue_.upload_locked(device_records, records_.data(), records_.size() * sizeof(NodeRecord));
}

Status Executor::launch_all(const NodeRecord* device_records) {
  // Launches report cudaGetLastError(): clear what an unchecked call (a free, an attribute)
  // left there, so it is not blamed on a kernel.
  (void)cudaGetLastError();
  queue_.mark_dirty_locked();
  for (size_t i = 0; i < records_.size(); ++i)
    if (int e = kernels_[i]->launch(*nodes_[i], device_records + i, records_[i], queue_.stream()))
      return queue_.check(static_cast<cudaError_t>(e), "a kernel launch");
  return Status::ok();
}

Status Executor::execute(const SubGraph& g) {
  std::lock_guard lock(mu_);
  // The queue stays locked for the whole sub-graph: no other thread's copy, event or
  // allocation may land between the records' upload and their kernels, or inside a capture.
  auto queued = queue_.hold();
  if (auto st = queue_.bind(); !st) return st;
  records_.clear();
  kernels_.clear();
  nodes_.clear();
  for (const GraphNode& n : g.nodes) {
    Support answer;
    const KernelDef* k = find(n, g.tensors, &answer);
    if (!k) return refuse(n, "no CUDA kernel runs this node (the scheduler should have placed it elsewhere)");
    NodeRecord r{};
    if (auto st = fill(r, 0, n, g.tensors, n.dst); !st) return st;
    for (int s = 0; s < kMaxSources; ++s) {
      if (n.src[s] < 0) continue;
      if (auto st = fill(r, 1 + s, n, g.tensors, n.src[s]); !st) return st;
      r.n_src = static_cast<uint32_t>(s + 1);
    }
    for (int i = 0; i < 8; ++i) r.ip[i] = n.i[i];
    for (int i = 0; i < 4; ++i) r.fp[i] = n.f[i];
    if (g.tensors[static_cast<size_t>(n.dst)].elements() == 0) continue;  // nothing to do
    records_.push_back(r);
    kernels_.push_back(k);
    nodes_.push_back(&n);
  }
  if (records_.empty()) return Status::ok();
  size_t scratch = 0;
  for (size_t i = 0; i < records_.size(); ++i)
    if (kernels_[i]->scratch) scratch = std::max(scratch, kernels_[i]->scratch(records_[i]));
  if (scratch > 0) {
    if (auto st = reserve(scratch_, scratch_cap_, scratch, "allocating kernel scratch"); !st) return st;
    for (size_t i = 0; i < records_.size(); ++i)
      if (kernels_[i]->scratch) records_[i].scratch = reinterpret_cast<uintptr_t>(scratch_);
  }

  const auto action = g.shape_key ? graphs_.decide(g.shape_key, records_.size()) : GraphCache::Action::eager;
  if (action == GraphCache::Action::eager) {
    if (auto st = reserve_records(records_.size()); !st) return st;
    if (auto st = upload_records(device_records_); !st) return st;
    return launch_all(static_cast<const NodeRecord*>(device_records_));
  }
  if (action == GraphCache::Action::replay) {
    auto* c = static_cast<Captured*>(graphs_.handle(g.shape_key));
    if (auto st = upload_records(c->records); !st) return st;
    queue_.mark_dirty_locked();
    return queue_.check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(c->exec), queue_.stream()), "a graph replay");
  }
  // Capture: the kernels go into a graph reading a record array of its own, then it runs.
  auto c = std::make_unique<Captured>();
  if (auto st = queue_.check(cudaMallocAsync(&c->records, records_.size() * sizeof(NodeRecord), queue_.stream()),
                             "allocating a graph's node records");
      !st)
    return st;
  // On a failure below, the records go back to the pool in stream order.
  auto fail = [&](Status st) {
    cudaFreeAsync(c->records, queue_.stream());
    return st;
  };
  if (auto st = upload_records(c->records); !st) return fail(st);
  (void)cudaGetLastError();
  if (auto st = queue_.check(cudaStreamBeginCapture(queue_.stream(), cudaStreamCaptureModeThreadLocal), "starting a graph capture");
      !st)
    return fail(st);
  Status launched = launch_all(static_cast<const NodeRecord*>(c->records));
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(queue_.stream(), &graph);
  if (!launched) {
    if (graph) cudaGraphDestroy(graph);
    return fail(launched);
  }
  if (auto st = queue_.check(ended, "ending a graph capture"); !st) return fail(st);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (auto st = queue_.check(made, "instantiating a graph"); !st) return fail(st);
  c->exec = exec;
  queue_.mark_dirty_locked();
  const Status run = queue_.check(cudaGraphLaunch(exec, queue_.stream()), "a graph launch");
  // Evicted graphs (this one too, if the cache did not take it) are freed in stream order,
  // after the launches queued above.
  destroy(graphs_.store(g.shape_key, records_.size(), c.release()));
  return run;
}

}  // namespace sy::cuda
