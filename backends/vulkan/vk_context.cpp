#include "vk_context.hpp"

#include <cstring>

namespace sy::vulkan {

std::string vk_error(VkResult r) {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    default: return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

Instance::~Instance() {
  if (handle) vkDestroyInstance(handle, nullptr);
}

Result<std::unique_ptr<Context>> Context::create(std::shared_ptr<Instance> inst, VkPhysicalDevice pd, size_t index) {
  std::unique_ptr<Context> c(new Context());
  c->instance_ = std::move(inst);
  c->physical_ = pd;
  c->index_ = index;
  vkGetPhysicalDeviceMemoryProperties(pd, &c->mem_);

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf.data());
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < nq && family == UINT32_MAX; ++i)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
  if (family == UINT32_MAX) return error::unsupported("vulkan" + std::to_string(index) + ": no compute queue");

  uint32_t next = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &next, nullptr);
  std::vector<VkExtensionProperties> exts(next);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &next, exts.data());
  std::vector<const char*> enable;
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME) == 0) {
      c->memory_budget_ = true;
      enable.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    }

  const float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  dci.ppEnabledExtensionNames = enable.data();
  if (auto r = vkCreateDevice(pd, &dci, nullptr, &c->device_); r != VK_SUCCESS)
    return error::unavailable("vulkan" + std::to_string(index) + ": cannot create a device (" + vk_error(r) + ")");
  vkGetDeviceQueue(c->device_, family, 0, &c->queue_);
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pci.queueFamilyIndex = family;
  if (auto r = vkCreateCommandPool(c->device_, &pci, nullptr, &c->pool_); r != VK_SUCCESS)
    return error::unavailable("vulkan: cannot create a command pool (" + vk_error(r) + ")");
  return c;
}

Context::~Context() {
  if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
  if (device_) vkDestroyDevice(device_, nullptr);
}

int Context::memory_type(uint32_t bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const {
  int fallback = -1;
  for (uint32_t i = 0; i < mem_.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    const auto flags = mem_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

Status Context::copy(VkBuffer src, VkDeviceSize so, VkBuffer dst, VkDeviceSize dof, VkDeviceSize n) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  if (auto r = vkAllocateCommandBuffers(device_, &ai, &cb); r != VK_SUCCESS)
    return error::out_of_memory("vulkan: cannot allocate a command buffer (" + vk_error(r) + ")");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cb, &bi);
  VkBufferCopy region{so, dof, n};
  vkCmdCopyBuffer(cb, src, dst, 1, &region);
  vkEndCommandBuffer(cb);
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  vkCreateFence(device_, &fci, nullptr, &fence);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  VkResult r = vkQueueSubmit(queue_, 1, &si, fence);
  if (r == VK_SUCCESS) r = vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX);
  vkDestroyFence(device_, fence, nullptr);
  vkFreeCommandBuffers(device_, pool_, 1, &cb);
  if (r != VK_SUCCESS) return error::io_error("vulkan: buffer copy failed (" + vk_error(r) + ")");
  return Status::ok();
}

RawBuffer::~RawBuffer() {
  if (!ctx) return;
  if (mapped) vkUnmapMemory(ctx->device(), memory);
  if (buffer) vkDestroyBuffer(ctx->device(), buffer, nullptr);
  if (memory) vkFreeMemory(ctx->device(), memory, nullptr);
}

Result<std::unique_ptr<RawBuffer>> make_raw_buffer(Context& ctx, VkDeviceSize size, bool host_visible) {
  auto b = std::make_unique<RawBuffer>();
  b->ctx = &ctx;
  b->size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size == 0 ? 4 : size;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (auto r = vkCreateBuffer(ctx.device(), &bci, nullptr, &b->buffer); r != VK_SUCCESS)
    return error::out_of_memory("vulkan: cannot create a buffer of " + std::to_string(size) + " bytes (" + vk_error(r) + ")");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx.device(), b->buffer, &req);
  const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Device buffers: device-local, mappable if the device offers it (UMA, ReBAR, lavapipe).
  const int type = host_visible ? ctx.memory_type(req.memoryTypeBits, hv, VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                                : ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, hv);
  if (type < 0) return error::unsupported("vulkan: no suitable memory type for a buffer");
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  if (auto r = vkAllocateMemory(ctx.device(), &mai, nullptr, &b->memory); r != VK_SUCCESS)
    return error::out_of_memory("vulkan" + std::to_string(ctx.index()) + ": cannot allocate " + std::to_string(size) +
                                " bytes (" + vk_error(r) + ")");
  vkBindBufferMemory(ctx.device(), b->buffer, b->memory, 0);
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(ctx.physical(), &props);
  if ((props.memoryTypes[type].propertyFlags & hv) == hv)
    if (auto r = vkMapMemory(ctx.device(), b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped); r != VK_SUCCESS)
      b->mapped = nullptr;
  return b;
}

}  // namespace sy::vulkan
