// Device memory: raw VkBuffers of each kind, and the SDK's Buffer over them.
#pragma once

#include <memory>

#include "vk_context.hpp"

namespace sy::vulkan {

class Queue;

/// A VkBuffer with its memory; frees both on destruction.
struct RawBuffer {
  Context* ctx = nullptr;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;  ///< host address when the memory is host-visible (kept mapped)
  VkDeviceSize size = 0;   ///< bytes asked for (the VkBuffer may be a little larger)
  uint64_t address = 0;    ///< device address; 0 for staging buffers, which kernels never read
  RawBuffer() = default;
  RawBuffer(const RawBuffer&) = delete;
  RawBuffer& operator=(const RawBuffer&) = delete;
  ~RawBuffer();
};

/// Allocates a buffer of `kind`: device_local prefers DEVICE_LOCAL memory (mapped when that
/// memory is also host-visible: unified memory, ReBAR, lavapipe); host_mapped is coherent
/// host memory that kernels reach by address; staging is host memory for copies only.
Result<std::unique_ptr<RawBuffer>> make_raw_buffer(Context& ctx, VkDeviceSize size, BufferKind kind);

/// The SDK buffer: a RawBuffer plus the queue its copies go through.
class VulkanBuffer final : public Buffer {
 public:
  VulkanBuffer(std::unique_ptr<RawBuffer> raw, BufferKind kind, Queue& queue)
      : raw_(std::move(raw)), kind_(kind), queue_(&queue) {}
  size_t size() const noexcept override { return raw_->size; }
  BufferKind kind() const noexcept override { return kind_; }
  void* host_data() noexcept override { return raw_->mapped; }
  Status upload(size_t offset, std::span<const std::byte> src) noexcept override;
  Status download(size_t offset, std::span<std::byte> dst) const noexcept override;

  /// Device address of the first byte (0 for staging buffers).
  uint64_t address() const { return raw_->address; }
  VkBuffer handle() const { return raw_->buffer; }
  /// The device (context) the memory belongs to.
  const Context* context() const { return raw_->ctx; }
  /// An error unless [offset, offset + n) lies inside the buffer.
  Status check_range(size_t offset, size_t n, const char* what) const;

 private:
  std::unique_ptr<RawBuffer> raw_;
  BufferKind kind_;
  Queue* queue_;
};

}  // namespace sy::vulkan
