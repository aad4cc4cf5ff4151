// The Vulkan backend: any GPU with a Vulkan driver (and, through Mesa's lavapipe, the CPU,
// which is how CI tests it). Compute shaders arrive with the Vulkan kernel work; until then
// devices report no op support.
#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <string>
#include <vector>

#include "switchyard/backend.hpp"
#include "switchyard/plugin.hpp"
#include "vk_context.hpp"

namespace sy::vulkan {
namespace {

// Staging transfers move at most this much at a time, so uploading a 20 GB model does
// not need a 20 GB staging buffer.
constexpr VkDeviceSize kStagingChunk = 64ull << 20;

class VulkanBuffer final : public Buffer {
 public:
  explicit VulkanBuffer(std::unique_ptr<RawBuffer> raw) : raw_(std::move(raw)) {}
  size_t size() const noexcept override { return raw_->size; }
  void* host_data() noexcept override { return raw_->mapped; }

  Status upload(size_t offset, std::span<const std::byte> src) noexcept override {
    if (auto st = bounds(offset, src.size(), "upload"); !st) return st;
    if (raw_->mapped) {
      std::memcpy(static_cast<std::byte*>(raw_->mapped) + offset, src.data(), src.size());
      return Status::ok();
    }
    return staged(offset, src.size(), [&](void* staging, size_t done, size_t n) {
      std::memcpy(staging, src.data() + done, n);
    }, true);
  }

  Status download(size_t offset, std::span<std::byte> dst) const noexcept override {
    if (auto st = bounds(offset, dst.size(), "download"); !st) return st;
    if (raw_->mapped) {
      std::memcpy(dst.data(), static_cast<const std::byte*>(raw_->mapped) + offset, dst.size());
      return Status::ok();
    }
    return staged(offset, dst.size(), [&](void* staging, size_t done, size_t n) {
      std::memcpy(dst.data() + done, staging, n);
    }, false);
  }

 private:
  Status bounds(size_t offset, size_t n, const char* what) const {
    if (offset > raw_->size || n > raw_->size - offset)
      return error::invalid_argument(std::string("vulkan: ") + what + " of " + std::to_string(n) + " bytes at offset " +
                                     std::to_string(offset) + " exceeds the buffer size " + std::to_string(raw_->size));
    return Status::ok();
  }

  template <class F>
  Status staged(size_t offset, size_t total, F&& move_bytes, bool to_device) const {
    auto st = make_raw_buffer(*raw_->ctx, std::min<VkDeviceSize>(total, kStagingChunk), true);
    if (!st) return st.status();
    auto& staging = *st.value();
    for (size_t done = 0; done < total;) {
      const size_t n = std::min<size_t>(total - done, kStagingChunk);
      if (to_device) {
        move_bytes(staging.mapped, done, n);
        if (auto s = raw_->ctx->copy(staging.buffer, 0, raw_->buffer, offset + done, n); !s) return s;
      } else {
        if (auto s = raw_->ctx->copy(raw_->buffer, offset + done, staging.buffer, 0, n); !s) return s;
        move_bytes(staging.mapped, done, n);
      }
      done += n;
    }
    return Status::ok();
  }

  std::unique_ptr<RawBuffer> raw_;
};

class VulkanDevice final : public Device {
 public:
  explicit VulkanDevice(std::unique_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  DeviceInfo info() const noexcept override {
    DeviceInfo d;
    d.name = "vulkan" + std::to_string(ctx_->index());
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(ctx_->physical(), &p);
    d.description = p.deviceName;
    switch (p.deviceType) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: d.kind = DeviceKind::discrete_gpu; break;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: d.kind = DeviceKind::integrated_gpu; break;
      case VK_PHYSICAL_DEVICE_TYPE_CPU: d.kind = DeviceKind::cpu; break;
      default: d.kind = DeviceKind::other;
    }
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 mp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    if (ctx_->has_memory_budget()) mp.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(ctx_->physical(), &mp);
    const auto& mem = mp.memoryProperties;
    for (uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
      if (!(mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
      d.total_memory += mem.memoryHeaps[h].size;
      d.free_memory += ctx_->has_memory_budget()
                           ? (budget.heapBudget[h] > budget.heapUsage[h] ? budget.heapBudget[h] - budget.heapUsage[h] : 0)
                           : mem.memoryHeaps[h].size;
    }
    const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    for (uint32_t t = 0; t < mem.memoryTypeCount; ++t)
      if ((mem.memoryTypes[t].propertyFlags & hv) == hv &&
          mem.memoryHeaps[mem.memoryTypes[t].heapIndex].size >= d.total_memory / 2)
        d.host_visible = true;
    return d;
  }
  Result<std::unique_ptr<Buffer>> allocate(size_t bytes) noexcept override {
    auto raw = make_raw_buffer(*ctx_, bytes, false);
    if (!raw) return raw.status();
    try {
      return std::unique_ptr<Buffer>(new VulkanBuffer(std::move(raw.value())));
    } catch (...) {
      return error::out_of_memory("vulkan: could not allocate a buffer object");
    }
  }
  bool supports(OpKind, StorageType) const noexcept override { return false; }
  Status execute(const SubGraph&) noexcept override {
    return error::unsupported("vulkan: graph execution is not implemented yet");
  }

 private:
  std::unique_ptr<Context> ctx_;
};

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(std::vector<std::unique_ptr<VulkanDevice>> d) : devices_(std::move(d)) {}
  size_t device_count() const noexcept override { return devices_.size(); }
  Device& device(size_t i) noexcept override { return *devices_[i]; }

 private:
  std::vector<std::unique_ptr<VulkanDevice>> devices_;
};

// The drivers the loader opened stay loaded until the process ends. Mesa's drivers set up a
// one-time global during device enumeration that the loader's dlclose at vkDestroyInstance
// makes unreachable (a bare create/destroy program shows the same 128 bytes), so a command
// that opens a backend and closes it (--list-devices, then run) would load them twice and
// lose that memory each time; LeakSanitizer reports it from an "<unknown module>".
void keep_drivers_loaded() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        if (info->dlpi_name && std::strstr(info->dlpi_name, "libvulkan_"))
          dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        return 0;
      },
      nullptr);
}

Result<std::unique_ptr<Component>> make_vulkan(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    auto inst = std::make_shared<Instance>();
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "switchyard";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    if (auto r = vkCreateInstance(&ici, nullptr, &inst->handle); r != VK_SUCCESS)
      return error::unavailable("vulkan: no Vulkan driver could be initialised (" + vk_error(r) +
                                "); install your GPU's Vulkan driver, or mesa-vulkan-drivers for a CPU device");
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(inst->handle, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(inst->handle, &n, pds.data());
    keep_drivers_loaded();
    if (n == 0) return error::unavailable("vulkan: the Vulkan driver reports no devices");
    auto chosen = select_devices(p, n, "vulkan");
    if (!chosen) return chosen.status();
    std::vector<std::unique_ptr<VulkanDevice>> devs;
    for (size_t i : chosen.value()) {
      auto ctx = Context::create(inst, pds[i], i);
      if (!ctx) return ctx.status();
      devs.push_back(std::make_unique<VulkanDevice>(std::move(ctx.value())));
    }
    return std::make_unique<VulkanBackend>(std::move(devs));
  });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "vulkan";
    pd.version = "0.1.0";
    pd.summary = "Any GPU with a Vulkan 1.2 driver";
    ComponentDesc c;
    c.kind = ComponentKind::backend;
    c.name = "vulkan";
    c.version = "0.1.0";
    c.rank = 50;
    c.summary = "GPU memory and compute shaders through Vulkan";
    c.factory = make_vulkan;
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::vulkan

SWITCHYARD_PLUGIN(sy::vulkan::describe)
