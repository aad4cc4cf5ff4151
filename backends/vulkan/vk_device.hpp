// One Vulkan device as the SDK sees it: memory of each kind, per-node capability answers
// from the kernel table, and asynchronous execution and copies on the device's queue.
#pragma once

#include <memory>

#include "vk_executor.hpp"

namespace sy::vulkan {

class VulkanDevice final : public Device {
 public:
  static Result<std::unique_ptr<VulkanDevice>> create(std::unique_ptr<Context> ctx);
  ~VulkanDevice() override;

  DeviceInfo info() const noexcept override;
  Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferKind kind) noexcept override;
  Support supports(const GraphNode& node, std::span<const GraphTensor> tensors) const noexcept override;
  Status execute(const SubGraph& graph) noexcept override;
  Status copy_to_device(Buffer& dst, size_t offset, std::span<const std::byte> src) noexcept override;
  Status copy_to_host(Buffer& src, size_t offset, std::span<std::byte> dst) noexcept override;
  uint64_t record_event() noexcept override;
  Status wait_event(uint64_t event) noexcept override;
  Status synchronize() noexcept override;

 private:
  explicit VulkanDevice(std::unique_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  Result<VulkanBuffer*> own(Buffer& b, const char* what) const;

  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Pipelines> pipelines_;
  std::unique_ptr<Queue> queue_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace sy::vulkan
