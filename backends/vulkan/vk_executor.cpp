#include "vk_executor.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <string>

namespace sy::vulkan {
namespace {

Status refuse(const Context& ctx, const GraphNode& n, const std::string& what) {
  return error::invalid_argument(ctx.name() + ": " + std::string(op_name(n.op)) + ": " + what);
}

}  // namespace

Executor::Executor(Context& ctx, Pipelines& pipelines, Queue& queue) : ctx_(ctx), pipelines_(pipelines), queue_(queue) {
  by_op_.resize(all_ops().size());
  for (const KernelDef* k : all_kernels())
    if (static_cast<size_t>(k->op) < by_op_.size()) by_op_[static_cast<size_t>(k->op)].push_back(k);
}

const KernelDef* Executor::find(const GraphNode& node, std::span<const GraphTensor> tensors, Support* answer) const {
  *answer = Support::no;
  if (static_cast<size_t>(node.op) >= by_op_.size() || node.dst < 0 || static_cast<size_t>(node.dst) >= tensors.size())
    return nullptr;
  for (int s = 0; s < kMaxSources; ++s)
    if (node.src[s] >= 0 && static_cast<size_t>(node.src[s]) >= tensors.size()) return nullptr;
  for (const KernelDef* k : by_op_[static_cast<size_t>(node.op)])
    if ((*answer = k->supports(node, tensors, ctx_.features())) != Support::no) return k;
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
  const auto* vb = dynamic_cast<const VulkanBuffer*>(t.buffer);
  if (!vb || vb->context() != &ctx_)
    return refuse(ctx_, n, which + (t.buffer ? " is in memory of another device" : " is host memory") +
                               "; it must be in a buffer of " + ctx_.name() + " (the scheduler copies it there)");
  if (vb->address() == 0) return refuse(ctx_, n, which + " is in a staging buffer, which kernels cannot read");
  if (auto st = vb->check_range(t.offset, static_cast<size_t>(tensor_extent(t)), "a tensor"); !st)
    return refuse(ctx_, n, which + ": " + st.message());
  r.addr[slot] = vb->address() + t.offset;
  r.type[slot] = static_cast<uint32_t>(t.type);
  for (int d = 0; d < 4; ++d) {
    // A dimension of size 1 is never stepped over: its stride (the whole tensor's size for
    // the outer ones, past 2 GiB for a large head) is not needed and is recorded as 0.
    const int64_t nb = t.ne[d] > 1 ? t.nb[d] : 0;
    if (t.ne[d] > std::numeric_limits<int32_t>::max() || nb > std::numeric_limits<int32_t>::max() ||
        nb < std::numeric_limits<int32_t>::min())
      return refuse(ctx_, n, which + " has a size or stride beyond 31 bits");
    r.ne[slot * 4 + d] = static_cast<int32_t>(t.ne[d]);
    r.nb[slot * 4 + d] = static_cast<int32_t>(nb);
  }
  return Status::ok();
}

Status Executor::reserve_scratch(uint64_t bytes) {
  if (scratch_ && scratch_->size >= bytes) return Status::ok();
  // Batches still in flight may read the old buffer: let them finish before it goes.
  if (scratch_)
    if (auto st = queue_.synchronize(); !st) return st;
  const uint64_t want = std::max<uint64_t>(bytes, scratch_ ? 2 * scratch_->size : 0);
  scratch_.reset();
  auto raw = make_raw_buffer(ctx_, want, BufferKind::device_local);
  if (!raw) return raw.status();
  scratch_ = std::move(raw.value());
  return Status::ok();
}

Status Executor::execute(const SubGraph& g) {
  std::lock_guard lock(mu_);
  launches_.clear();
  const auto& limits = ctx_.properties().limits;
  uint64_t scratch_bytes = 0;
  for (const GraphNode& n : g.nodes) {
    Support answer;
    const KernelDef* k = find(n, g.tensors, &answer);
    if (!k) return refuse(ctx_, n, "no Vulkan kernel runs this node (the scheduler should have placed it elsewhere)");
    const Launch l = k->plan(n, g.tensors, ctx_.features());
    auto pipe = pipelines_.get(l.shader);
    if (!pipe) return pipe.status();
    VkPipeline prep = VK_NULL_HANDLE;
    if (!l.prep_shader.empty()) {
      auto p = pipelines_.get(l.prep_shader);
      if (!p) return p.status();
      prep = p.value();
    }
    Dispatch d;
    d.pipeline = pipe.value();
    NodeRecord& r = d.record;
    if (auto st = fill(r, 0, n, g.tensors, n.dst); !st) return st;
    for (int s = 0; s < kMaxSources; ++s) {
      if (n.src[s] < 0) continue;
      if (auto st = fill(r, 1 + s, n, g.tensors, n.src[s]); !st) return st;
      r.n_src = static_cast<uint32_t>(s + 1);
    }
    for (int i = 0; i < 8; ++i) r.ip[i] = n.i[i];
    for (int i = 0; i < 4; ++i) r.fp[i] = n.f[i];
    for (int i = 0; i < 4; ++i) r.up[i] = l.u[i];
    for (int i = 0; i < 3; ++i) {
      if (l.groups[i] > limits.maxComputeWorkGroupCount[i])
        return refuse(ctx_, n, "kernel '" + std::string(l.shader) + "' asked for " + std::to_string(l.groups[i]) +
                                   " workgroups in dimension " + std::to_string(i) + ", the device allows " +
                                   std::to_string(limits.maxComputeWorkGroupCount[i]));
      d.groups[i] = l.groups[i];
    }
    // A node with nothing to do still gets its record written but no workgroups.
    if (d.groups[0] == 0 || d.groups[1] == 0 || d.groups[2] == 0) continue;
    if (prep != VK_NULL_HANDLE) {
      Dispatch p = d;
      p.pipeline = prep;
      for (int i = 0; i < 3; ++i) {
        if (l.prep_groups[i] > limits.maxComputeWorkGroupCount[i])
          return refuse(ctx_, n, "kernel '" + std::string(l.prep_shader) + "' asked for " +
                                     std::to_string(l.prep_groups[i]) + " workgroups in dimension " +
                                     std::to_string(i) + ", the device allows " +
                                     std::to_string(limits.maxComputeWorkGroupCount[i]));
        p.groups[i] = l.prep_groups[i];
      }
      if (p.groups[0] != 0 && p.groups[1] != 0 && p.groups[2] != 0) launches_.push_back(p);
    }
    scratch_bytes = std::max(scratch_bytes, l.scratch_bytes);
    launches_.push_back(d);
  }
  if (scratch_bytes > 0) {
    if (auto st = reserve_scratch(scratch_bytes); !st) return st;
    for (auto& d : launches_) d.record.scratch = scratch_->address;
  }
  return queue_.dispatch(launches_);
}

}  // namespace sy::vulkan
