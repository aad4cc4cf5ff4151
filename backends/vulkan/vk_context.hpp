// Vulkan objects owned by the backend: the instance, and per device a logical device with
// one compute-capable queue used for transfers now and compute later.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>
#include <vector>

#include "switchyard/backend.hpp"

namespace sy::vulkan {

std::string vk_error(VkResult r);

/// The instance; destroyed after every device (devices hold a shared_ptr to it).
struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  ~Instance();
};

/// One physical device with its logical device, queue and command pool.
class Context {
 public:
  static Result<std::unique_ptr<Context>> create(std::shared_ptr<Instance> inst, VkPhysicalDevice pd, size_t index);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  size_t index() const { return index_; }
  bool has_memory_budget() const { return memory_budget_; }
  /// Memory type index with all `required` flags (and preferably `preferred`), or -1.
  int memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;
  /// Copies between buffers and waits; used for staging uploads and downloads.
  Status copy(VkBuffer src, VkDeviceSize src_off, VkBuffer dst, VkDeviceSize dst_off, VkDeviceSize n);

 private:
  Context() = default;
  std::shared_ptr<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties mem_{};
  size_t index_ = 0;
  bool memory_budget_ = false;
};

/// A VkBuffer with its memory; frees both on destruction.
struct RawBuffer {
  Context* ctx = nullptr;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
  ~RawBuffer();
};

/// Allocates a storage buffer; `host_visible` forces mappable memory (staging).
Result<std::unique_ptr<RawBuffer>> make_raw_buffer(Context& ctx, VkDeviceSize size, bool host_visible);

}  // namespace sy::vulkan
