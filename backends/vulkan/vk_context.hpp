// Vulkan objects owned by the backend: the instance, and per device a logical device with
// the features every kernel relies on (buffer device addresses, 64-bit integers, 8/16-bit
// storage, timeline semaphores) and one compute queue.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "switchyard/backend.hpp"

namespace sy::vulkan {

std::string vk_error(VkResult r);

/// The instance; destroyed after every device (devices hold a shared_ptr to it).
struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  ~Instance();
};

/// One physical device with its logical device and compute queue.
class Context {
 public:
  /// Fails with one line naming the first required feature the device lacks.
  static Result<std::unique_ptr<Context>> create(std::shared_ptr<Instance> inst, VkPhysicalDevice pd, size_t index);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return family_; }
  size_t index() const { return index_; }
  /// "vulkan0", for messages.
  const std::string& name() const { return name_; }
  bool has_memory_budget() const { return memory_budget_; }
  /// Device-local memory is host memory too (integrated GPU, lavapipe): device_local
  /// buffers are mapped and host-readable in place. A discrete GPU's host-visible VRAM
  /// (ReBAR) does not count: reading it from the host is far slower than a copy.
  bool unified_memory() const { return unified_; }
  const VkPhysicalDeviceProperties& properties() const { return props_; }
  const VkPhysicalDeviceMemoryProperties& memory() const { return mem_; }
  /// What kernels may choose paths by (portable_only from SWITCHYARD_VULKAN_PATH).
  const Features& features() const { return features_; }
  /// Memory type index with all `required` flags (and preferably `preferred`), or -1.
  int memory_type(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;
  /// Memory type with all `required` flags, preferably none of `avoided`, or -1.
  int memory_type_without(uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags avoided) const;

 private:
  Context() = default;
  std::shared_ptr<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkPhysicalDeviceProperties props_{};
  VkPhysicalDeviceMemoryProperties mem_{};
  Features features_;
  size_t index_ = 0;
  std::string name_;
  bool memory_budget_ = false;
  bool unified_ = false;
};

}  // namespace sy::vulkan
