#include "vk_queue.hpp"

#include <algorithm>
#include <cstring>

namespace sy::vulkan {
namespace {

// Scratch comes in slabs of at least this size; bigger requests get a slab of their own.
constexpr VkDeviceSize kSlabBytes = 256ull << 10;
// At most this many submissions are queued: a caller that never waits still has its
// oldest work finished (and its scratch reused) instead of growing without bound.
constexpr size_t kMaxBatchesInFlight = 32;
// A copy larger than this is staged in pieces, so a 20 GB upload never needs 20 GB of staging.
constexpr VkDeviceSize kStagingChunk = 16ull << 20;
// An open batch holding this much staged data is submitted, and the host waits for older
// batches while more than kMaxStagedInFlight is queued: staging memory stays bounded.
constexpr VkDeviceSize kMaxStagedOpen = 64ull << 20;
constexpr VkDeviceSize kMaxStagedInFlight = 256ull << 20;
// Idle slabs kept for reuse; beyond this they are freed.
constexpr VkDeviceSize kMaxFreeSlabBytes = 128ull << 20;

VkDeviceSize round_up(VkDeviceSize n, VkDeviceSize a) { return (n + a - 1) / a * a; }

}  // namespace

Result<std::unique_ptr<Queue>> Queue::create(Context& ctx, VkPipelineLayout layout) {
  std::unique_ptr<Queue> q(new Queue(ctx));
  q->layout_ = layout;
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = ctx.queue_family();
  if (auto r = vkCreateCommandPool(ctx.device(), &pci, nullptr, &q->pool_); r != VK_SUCCESS)
    return error::unavailable(ctx.name() + ": cannot create a command pool (" + vk_error(r) + ")");
  VkSemaphoreTypeCreateInfo tci{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  tci.initialValue = 0;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sci.pNext = &tci;
  if (auto r = vkCreateSemaphore(ctx.device(), &sci, nullptr, &q->timeline_); r != VK_SUCCESS)
    return error::unavailable(ctx.name() + ": cannot create a timeline semaphore (" + vk_error(r) + ")");
  return q;
}

Queue::~Queue() {
  // Nothing may still run on memory about to be freed.
  if (ctx_.device()) vkDeviceWaitIdle(ctx_.device());
  auto drop = [&](std::unique_ptr<Batch>& b) {
    if (b && b->cb) vkFreeCommandBuffers(ctx_.device(), pool_, 1, &b->cb);
  };
  drop(open_);
  for (auto& b : in_flight_) drop(b);
  for (auto& b : free_batches_) drop(b);
  open_.reset();
  in_flight_.clear();
  free_batches_.clear();
  free_slabs_.clear();
  if (timeline_) vkDestroySemaphore(ctx_.device(), timeline_, nullptr);
  if (pool_) vkDestroyCommandPool(ctx_.device(), pool_, nullptr);
}

Status Queue::broken() const {
  return error::unavailable(ctx_.name() + ": the device stopped working (" + vk_error(lost_) + ")");
}

Status Queue::open() {
  if (open_ && open_->recording) return Status::ok();
  if (!open_) {
    if (!free_batches_.empty()) {
      open_ = std::move(free_batches_.back());
      free_batches_.pop_back();
    } else {
      open_ = std::make_unique<Batch>();
    }
  }
  if (!open_->cb) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    if (auto r = vkAllocateCommandBuffers(ctx_.device(), &ai, &open_->cb); r != VK_SUCCESS)
      return error::out_of_memory(ctx_.name() + ": cannot allocate a command buffer (" + vk_error(r) + ")");
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (auto r = vkBeginCommandBuffer(open_->cb, &bi); r != VK_SUCCESS)
    return error::out_of_memory(ctx_.name() + ": cannot record a command buffer (" + vk_error(r) + ")");
  open_->recording = true;
  return Status::ok();
}

Result<Queue::Scratch> Queue::scratch(VkDeviceSize n) {
  n = round_up(std::max<VkDeviceSize>(n, 1), 64);
  auto& slabs = open_->slabs;
  if (slabs.empty() || slabs.back()->raw->size - slabs.back()->used < n) {
    // The smallest idle slab that fits, else a new one.
    auto best = free_slabs_.end();
    for (auto it = free_slabs_.begin(); it != free_slabs_.end(); ++it)
      if ((*it)->raw->size >= n && (best == free_slabs_.end() || (*it)->raw->size < (*best)->raw->size)) best = it;
    if (best != free_slabs_.end()) {
      free_slab_bytes_ -= (*best)->raw->size;
      slabs.push_back(std::move(*best));
      free_slabs_.erase(best);
    } else {
      auto raw = make_raw_buffer(ctx_, std::max(kSlabBytes, round_up(n, kSlabBytes)), BufferKind::host_mapped);
      if (!raw) return raw.status();
      auto s = std::make_unique<Slab>();
      s->raw = std::move(raw.value());
      slabs.push_back(std::move(s));
    }
  }
  auto& s = *slabs.back();
  Scratch out{static_cast<std::byte*>(s.raw->mapped) + s.used, s.raw->buffer, s.used, s.raw->address + s.used};
  s.used += n;
  return out;
}

// Kernels reach memory by address, so a global memory barrier is the only kind that
// covers them; ordering every command against every other keeps copies and kernels
// (in this and earlier submissions) in queue order.
void Queue::barrier() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vkCmdPipelineBarrier(open_->cb, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

Status Queue::flush() {
  if (!open_ || !open_->recording) return Status::ok();
  // The host reads staged results (and mapped buffers) after waiting on the timeline.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(open_->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  open_->recording = false;
  if (auto r = vkEndCommandBuffer(open_->cb); r != VK_SUCCESS) {
    lost_ = r;
    return broken();
  }
  const uint64_t value = submitted_ + 1;
  VkTimelineSemaphoreSubmitInfo tsi{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  tsi.signalSemaphoreValueCount = 1;
  tsi.pSignalSemaphoreValues = &value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &tsi;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &open_->cb;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &timeline_;
  if (auto r = vkQueueSubmit(ctx_.queue(), 1, &si, VK_NULL_HANDLE); r != VK_SUCCESS) {
    lost_ = r;
    return broken();
  }
  submitted_ = value;
  open_->value = value;
  staged_in_flight_ += open_->staged;
  in_flight_.push_back(std::move(open_));
  // Recycle what already finished, then bound what is queued: wait for the oldest
  // batches while too many, or too much staged memory, are in flight.
  uint64_t done = 0;
  if (vkGetSemaphoreCounterValue(ctx_.device(), timeline_, &done) == VK_SUCCESS) retire(done);
  while (in_flight_.size() > kMaxBatchesInFlight || (staged_in_flight_ > kMaxStagedInFlight && in_flight_.size() > 1))
    if (auto st = wait_locked(in_flight_.front()->value); !st) return st;
  return Status::ok();
}

void Queue::retire(uint64_t completed) {
  while (!in_flight_.empty() && in_flight_.front()->value <= completed) {
    auto b = std::move(in_flight_.front());
    in_flight_.pop_front();
    for (const auto& c : b->host_copies) std::memcpy(c.to, c.from, c.n);
    b->host_copies.clear();
    staged_in_flight_ -= b->staged;
    b->staged = 0;
    for (auto& s : b->slabs) {
      s->used = 0;
      if (free_slab_bytes_ + s->raw->size <= kMaxFreeSlabBytes) {
        free_slab_bytes_ += s->raw->size;
        free_slabs_.push_back(std::move(s));
      }
    }
    b->slabs.clear();
    vkResetCommandBuffer(b->cb, 0);
    free_batches_.push_back(std::move(b));
  }
}

Status Queue::wait_locked(uint64_t value) {
  if (lost_ != VK_SUCCESS) return broken();
  if (value > submitted_)
    if (auto st = flush(); !st) return st;
  value = std::min(value, submitted_);
  if (value == 0) return Status::ok();
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &timeline_;
  wi.pValues = &value;
  if (auto r = vkWaitSemaphores(ctx_.device(), &wi, UINT64_MAX); r != VK_SUCCESS) {
    lost_ = r;
    return broken();
  }
  uint64_t done = value;
  vkGetSemaphoreCounterValue(ctx_.device(), timeline_, &done);
  retire(done);
  return Status::ok();
}

Status Queue::dispatch(std::span<const Dispatch> launches) {
  std::lock_guard lock(mu_);
  if (lost_ != VK_SUCCESS) return broken();
  if (launches.empty()) return Status::ok();
  if (auto st = open(); !st) return st;
  auto rec = scratch(launches.size() * sizeof(NodeRecord));
  if (!rec) return rec.status();
  auto* records = reinterpret_cast<NodeRecord*>(rec->host);
  VkPipeline bound = VK_NULL_HANDLE;
  for (size_t i = 0; i < launches.size(); ++i) {
    const auto& l = launches[i];
    records[i] = l.record;
    barrier();
    if (l.pipeline != bound) {
      vkCmdBindPipeline(open_->cb, VK_PIPELINE_BIND_POINT_COMPUTE, l.pipeline);
      bound = l.pipeline;
    }
    const uint64_t address = rec->address + i * sizeof(NodeRecord);
    vkCmdPushConstants(open_->cb, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(address), &address);
    vkCmdDispatch(open_->cb, l.groups[0], l.groups[1], l.groups[2]);
  }
  barrier();
  return flush();
}

Status Queue::copy_to_device(VkBuffer dst, VkDeviceSize offset, std::span<const std::byte> src) {
  std::lock_guard lock(mu_);
  if (lost_ != VK_SUCCESS) return broken();
  for (size_t done = 0; done < src.size();) {
    const size_t n = static_cast<size_t>(std::min<VkDeviceSize>(src.size() - done, kStagingChunk));
    if (auto st = open(); !st) return st;
    auto s = scratch(n);
    if (!s) return s.status();
    std::memcpy(s->host, src.data() + done, n);
    barrier();
    VkBufferCopy region{s->offset, offset + done, n};
    vkCmdCopyBuffer(open_->cb, s->buffer, dst, 1, &region);
    open_->staged += n;
    done += n;
    if (open_->staged >= kMaxStagedOpen)
      if (auto st = flush(); !st) return st;
  }
  return Status::ok();
}

Status Queue::copy_to_host(VkBuffer src, VkDeviceSize offset, std::span<std::byte> dst) {
  std::lock_guard lock(mu_);
  if (lost_ != VK_SUCCESS) return broken();
  for (size_t done = 0; done < dst.size();) {
    const size_t n = static_cast<size_t>(std::min<VkDeviceSize>(dst.size() - done, kStagingChunk));
    if (auto st = open(); !st) return st;
    auto s = scratch(n);
    if (!s) return s.status();
    barrier();
    VkBufferCopy region{offset + done, s->offset, n};
    vkCmdCopyBuffer(open_->cb, src, s->buffer, 1, &region);
    open_->host_copies.push_back({s->host, dst.data() + done, n});
    open_->staged += n;
    done += n;
    if (open_->staged >= kMaxStagedOpen)
      if (auto st = flush(); !st) return st;
  }
  return Status::ok();
}

Result<uint64_t> Queue::record_event() {
  std::lock_guard lock(mu_);
  if (lost_ != VK_SUCCESS) return broken();
  if (auto st = flush(); !st) return st;
  return submitted_;
}

Status Queue::wait(uint64_t value) {
  std::lock_guard lock(mu_);
  return wait_locked(value);
}

Status Queue::synchronize() {
  std::lock_guard lock(mu_);
  if (lost_ != VK_SUCCESS) return broken();
  if (auto st = flush(); !st) return st;
  return wait_locked(submitted_);
}

}  // namespace sy::vulkan
