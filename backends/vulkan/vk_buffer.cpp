#include "vk_buffer.hpp"

#include <cstring>

#include "vk_queue.hpp"

namespace sy::vulkan {

RawBuffer::~RawBuffer() {
  if (!ctx) return;
  if (mapped) vkUnmapMemory(ctx->device(), memory);
  if (buffer) vkDestroyBuffer(ctx->device(), buffer, nullptr);
  if (memory) vkFreeMemory(ctx->device(), memory, nullptr);
}

Result<std::unique_ptr<RawBuffer>> make_raw_buffer(Context& ctx, VkDeviceSize size, BufferKind kind) {
  auto b = std::make_unique<RawBuffer>();
  b->ctx = &ctx;
  b->size = size;
  const bool kernels_read = kind != BufferKind::staging;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  // Rounded up so a kernel may read a whole 16-byte word at the end of a tensor.
  bci.size = (size + 15) / 16 * 16 + (size == 0 ? 16 : 0);
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (kernels_read) bci.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  const std::string who = ctx.name() + ": ";
  if (auto r = vkCreateBuffer(ctx.device(), &bci, nullptr, &b->buffer); r != VK_SUCCESS)
    return error::out_of_memory(who + "cannot create a buffer of " + std::to_string(size) + " bytes (" + vk_error(r) + ")");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx.device(), b->buffer, &req);
  const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int type = -1;
  if (kind != BufferKind::device_local)
    type = ctx.memory_type(req.memoryTypeBits, hv, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  else if (ctx.unified_memory())
    type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | hv, 0);
  else  // plain VRAM first: a small host-visible window (ReBAR) is left to whoever needs it
    type = ctx.memory_type_without(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  if (type < 0)
    return error::unsupported(who + "no memory type for a " + std::string(buffer_kind_name(kind)) + " buffer");
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  if (kernels_read) mai.pNext = &flags;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  if (auto r = vkAllocateMemory(ctx.device(), &mai, nullptr, &b->memory); r != VK_SUCCESS)
    return error::out_of_memory(who + "cannot allocate " + std::to_string(size) + " bytes of " +
                                std::string(buffer_kind_name(kind)) + " memory (" + vk_error(r) + ")");
  if (auto r = vkBindBufferMemory(ctx.device(), b->buffer, b->memory, 0); r != VK_SUCCESS)
    return error::out_of_memory(who + "cannot bind buffer memory (" + vk_error(r) + ")");
  if (kind != BufferKind::device_local || ctx.unified_memory())
    if (auto r = vkMapMemory(ctx.device(), b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped); r != VK_SUCCESS)
      return error::out_of_memory(who + "cannot map " + std::to_string(size) + " bytes (" + vk_error(r) + ")");
  if (kernels_read) {
    VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    ai.buffer = b->buffer;
    b->address = vkGetBufferDeviceAddress(ctx.device(), &ai);
  }
  return b;
}

Status VulkanBuffer::check_range(size_t offset, size_t n, const char* what) const {
  if (offset > raw_->size || n > raw_->size - offset)
    return error::invalid_argument(raw_->ctx->name() + ": " + what + " of " + std::to_string(n) + " bytes at offset " +
                                   std::to_string(offset) + " exceeds the buffer size " + std::to_string(raw_->size));
  return Status::ok();
}

// Synchronous: queued kernels may still write the buffer, so wait for them first.
Status VulkanBuffer::upload(size_t offset, std::span<const std::byte> src) noexcept {
  if (auto st = check_range(offset, src.size(), "upload"); !st) return st;
  if (src.empty()) return Status::ok();
  if (raw_->mapped) {
    if (auto st = queue_->synchronize(); !st) return st;
    std::memcpy(static_cast<std::byte*>(raw_->mapped) + offset, src.data(), src.size());
    return Status::ok();
  }
  if (auto st = queue_->copy_to_device(raw_->buffer, offset, src); !st) return st;
  return queue_->synchronize();
}

Status VulkanBuffer::download(size_t offset, std::span<std::byte> dst) const noexcept {
  if (auto st = check_range(offset, dst.size(), "download"); !st) return st;
  if (dst.empty()) return Status::ok();
  if (raw_->mapped) {
    if (auto st = queue_->synchronize(); !st) return st;
    std::memcpy(dst.data(), static_cast<const std::byte*>(raw_->mapped) + offset, dst.size());
    return Status::ok();
  }
  if (auto st = queue_->copy_to_host(raw_->buffer, offset, dst); !st) return st;
  return queue_->synchronize();
}

}  // namespace sy::vulkan
