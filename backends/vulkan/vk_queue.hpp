// The device's one queue: work is recorded into an open batch (a command buffer plus the
// host-visible scratch its records and staged bytes live in) and submitted without
// waiting; each submission signals the next value of a timeline semaphore, which is what
// events are. A batch's command buffer and scratch are reused once its value completed,
// never earlier, so the GPU never reads a record or staged byte that was overwritten.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "kernels/kernel.hpp"
#include "vk_buffer.hpp"

namespace sy::vulkan {

/// One kernel launch: the pipeline, its workgroups, and the record it reads.
struct Dispatch {
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t groups[3] = {1, 1, 1};
  NodeRecord record{};
};

class Queue {
 public:
  static Result<std::unique_ptr<Queue>> create(Context& ctx, VkPipelineLayout layout);
  ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  /// Queues the launches in order, each followed by a memory barrier, and submits them.
  Status dispatch(std::span<const Dispatch> launches);
  /// Queues a copy of `src` into `dst` at `offset`; `src` is staged before returning.
  Status copy_to_device(VkBuffer dst, VkDeviceSize offset, std::span<const std::byte> src);
  /// Queues a copy of `src` at `offset` into host memory `dst`, filled once the copy's
  /// submission completed and the queue noticed it (at the latest in the next wait).
  Status copy_to_host(VkBuffer src, VkDeviceSize offset, std::span<std::byte> dst);
  /// Submits what is open; returns the timeline value that completes after it (0: nothing queued ever).
  Result<uint64_t> record_event();
  /// Waits until `value` completed and finishes the host copies queued before it.
  Status wait(uint64_t value);
  /// Waits for everything queued.
  Status synchronize();

 private:
  struct Slab {  ///< host-visible scratch, handed out front to back
    std::unique_ptr<RawBuffer> raw;
    VkDeviceSize used = 0;
  };
  struct HostCopy {
    const std::byte* from;
    std::byte* to;
    size_t n;
  };
  struct Batch {
    VkCommandBuffer cb = VK_NULL_HANDLE;
    uint64_t value = 0;
    bool recording = false;
    VkDeviceSize staged = 0;  ///< staging bytes it holds (bounds the memory in flight)
    std::vector<std::unique_ptr<Slab>> slabs;
    std::vector<HostCopy> host_copies;
  };
  struct Scratch {
    std::byte* host;
    VkBuffer buffer;
    VkDeviceSize offset;
    uint64_t address;
  };

  explicit Queue(Context& ctx) : ctx_(ctx) {}
  Status open();                       // makes open_ a recording batch
  Result<Scratch> scratch(VkDeviceSize n);
  void barrier();                      // orders everything before against everything after
  Status flush();                      // submits open_ if it recorded anything
  Status wait_locked(uint64_t value);
  void retire(uint64_t completed);     // finishes and recycles batches up to `completed`
  Status broken() const;

  Context& ctx_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  std::mutex mu_;
  std::unique_ptr<Batch> open_;
  std::deque<std::unique_ptr<Batch>> in_flight_;
  std::vector<std::unique_ptr<Batch>> free_batches_;
  std::vector<std::unique_ptr<Slab>> free_slabs_;
  VkDeviceSize free_slab_bytes_ = 0;
  VkDeviceSize staged_in_flight_ = 0;
  uint64_t submitted_ = 0;  ///< last timeline value submitted
  VkResult lost_ = VK_SUCCESS;
};

}  // namespace sy::vulkan
