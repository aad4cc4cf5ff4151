// The Vulkan backend: any GPU with a Vulkan 1.2 driver (and, through Mesa's lavapipe, the
// CPU, which is how CI tests it). Kernels are GLSL compute shaders embedded as SPIR-V; each
// device runs the nodes its kernel table (kernels/registry.cpp) accepts.
#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <string>
#include <vector>

#include "switchyard/backend.hpp"
#include "switchyard/plugin.hpp"
#include "kernels/kernel.hpp"
#include "vk_device.hpp"

namespace sy::vulkan {
namespace {

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
    // Without an explicit `devices` list, a device lacking a required feature (an old
    // integrated GPU beside a good one) is left out; named devices must all work.
    const auto named = p.get_int_list("devices");
    const bool explicit_list = named && !named->empty();
    // Nor is a CPU device (Mesa's lavapipe) used beside a real GPU unless named: placement
    // would give it layers by its RAM-sized budget and run them on an emulator.
    auto is_cpu_type = [&](size_t i) {
      VkPhysicalDeviceProperties pr;
      vkGetPhysicalDeviceProperties(pds[i], &pr);
      return pr.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    };
    bool real_gpu = false;
    for (size_t i : chosen.value()) real_gpu = real_gpu || !is_cpu_type(i);
    std::vector<std::unique_ptr<VulkanDevice>> devs;
    Status first_error = Status::ok();
    for (size_t i : chosen.value()) {
      if (!explicit_list && real_gpu && is_cpu_type(i)) continue;
      auto ctx = Context::create(inst, pds[i], i);
      auto dev = ctx ? VulkanDevice::create(std::move(ctx.value())) : Result<std::unique_ptr<VulkanDevice>>(ctx.status());
      if (!dev) {
        if (explicit_list) return dev.status();
        if (first_error.is_ok()) first_error = dev.status();
        continue;
      }
      devs.push_back(std::move(dev.value()));
    }
    if (devs.empty()) return first_error;
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
    for (const auto& t : matmul_weight_types()) c.traits.push_back(std::string(kTraitNativePrefix) + t);
    c.factory = make_vulkan;
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::vulkan

SWITCHYARD_PLUGIN(sy::vulkan::describe)
