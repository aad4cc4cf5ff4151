#include "vk_context.hpp"

#include <cstdlib>
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
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

Instance::~Instance() {
  if (handle) vkDestroyInstance(handle, nullptr);
}

namespace {

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// SWITCHYARD_VULKAN_PATH narrows the kernel paths so tests reach each one on one device:
// "portable" uses no fast path, "no-int-dot" leaves out the integer dot product only.
bool path_is(const char* value) {
  const char* v = std::getenv("SWITCHYARD_VULKAN_PATH");
  return v && std::strcmp(v, value) == 0;
}

}  // namespace

Result<std::unique_ptr<Context>> Context::create(std::shared_ptr<Instance> inst, VkPhysicalDevice pd, size_t index) {
  std::unique_ptr<Context> c(new Context());
  c->instance_ = std::move(inst);
  c->physical_ = pd;
  c->index_ = index;
  c->name_ = "vulkan" + std::to_string(index);
  vkGetPhysicalDeviceMemoryProperties(pd, &c->mem_);

  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &sub;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  c->props_ = p2.properties;
  const std::string who = c->name_ + " (" + c->props_.deviceName + ")";
  if (c->props_.apiVersion < VK_API_VERSION_1_2)
    return error::unsupported(who + ": needs Vulkan 1.2, the driver offers " +
                              std::to_string(VK_API_VERSION_MAJOR(c->props_.apiVersion)) + "." +
                              std::to_string(VK_API_VERSION_MINOR(c->props_.apiVersion)));

  uint32_t next = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &next, nullptr);
  std::vector<VkExtensionProperties> exts(next);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &next, exts.data());

  // What the device has.
  VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot_have{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
  VkPhysicalDeviceVulkan12Features v12_have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features v11_have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 f2_have{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2_have.pNext = &v11_have;
  v11_have.pNext = &v12_have;
  const bool dot_ext = has_extension(exts, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  if (dot_ext) v12_have.pNext = &dot_have;
  vkGetPhysicalDeviceFeatures2(pd, &f2_have);

  struct Need {
    VkBool32 have;
    const char* name;
  };
  const Need needs[] = {
      {v12_have.bufferDeviceAddress, "bufferDeviceAddress"},
      {f2_have.features.shaderInt64, "shaderInt64"},
      {v12_have.storageBuffer8BitAccess, "storageBuffer8BitAccess"},
      {v11_have.storageBuffer16BitAccess, "storageBuffer16BitAccess"},
      {v12_have.timelineSemaphore, "timelineSemaphore"},
  };
  for (const auto& n : needs)
    if (!n.have) return error::unsupported(who + ": the device lacks the Vulkan feature " + n.name);

  // What we enable: the required features, plus what fast paths may use when present.
  VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot_on{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &v11;
  v11.pNext = &v12;
  f2.features.shaderInt64 = VK_TRUE;
  f2.features.shaderInt16 = f2_have.features.shaderInt16;
  v11.storageBuffer16BitAccess = VK_TRUE;
  v12.bufferDeviceAddress = VK_TRUE;
  v12.storageBuffer8BitAccess = VK_TRUE;
  v12.timelineSemaphore = VK_TRUE;
  v12.shaderInt8 = v12_have.shaderInt8;
  v12.shaderFloat16 = v12_have.shaderFloat16;
  std::vector<const char*> enable;
  if (has_extension(exts, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME)) {
    c->memory_budget_ = true;
    enable.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  }
  if (dot_ext && dot_have.shaderIntegerDotProduct && !path_is("no-int-dot")) {
    enable.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    dot_on.shaderIntegerDotProduct = VK_TRUE;
    v12.pNext = &dot_on;
    c->features_.integer_dot_product = true;
  }
  // Detected only: no kernel uses it yet, and the headers here may predate its structures.
  c->features_.cooperative_matrix = has_extension(exts, "VK_KHR_cooperative_matrix");
  if (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) {
    c->features_.subgroup_size = sub.subgroupSize;
    c->features_.subgroup_arithmetic = (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0;
  }
  c->features_.portable_only = path_is("portable");

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf.data());
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < nq && family == UINT32_MAX; ++i)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
  if (family == UINT32_MAX) return error::unsupported(who + ": no compute queue");
  c->family_ = family;

  const float prio = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &f2;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  dci.ppEnabledExtensionNames = enable.data();
  if (auto r = vkCreateDevice(pd, &dci, nullptr, &c->device_); r != VK_SUCCESS)
    return error::unavailable(who + ": cannot create a device (" + vk_error(r) + ")");
  vkGetDeviceQueue(c->device_, family, 0, &c->queue_);
  if (c->props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
      c->props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t t = 0; t < c->mem_.memoryTypeCount; ++t)
      if ((c->mem_.memoryTypes[t].propertyFlags & want) == want) c->unified_ = true;
  }
  return c;
}

Context::~Context() {
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

int Context::memory_type_without(uint32_t bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags avoided) const {
  int fallback = -1;
  for (uint32_t i = 0; i < mem_.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    const auto flags = mem_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if (!(flags & avoided)) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

}  // namespace sy::vulkan
