// The CUDA backend: NVIDIA GPUs through the CUDA runtime (linked statically, so loading
// this plugin needs no CUDA library; the driver is looked up when a device is first used).
// describe() makes no CUDA call: the manifest is written on machines without a GPU.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "cu_device.hpp"
#include "switchyard/plugin.hpp"

namespace sy::cuda {
namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::vector<std::unique_ptr<CudaDevice>> devices) : devices_(std::move(devices)) {}
  size_t device_count() const noexcept override { return devices_.size(); }
  Device& device(size_t i) noexcept override { return *devices_[i]; }

 private:
  std::vector<std::unique_ptr<CudaDevice>> devices_;
};

Result<std::unique_ptr<Component>> make_cuda(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    int count = 0;
    if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0)
      return error::unavailable("cuda: no usable CUDA device (" + (e == cudaSuccess ? std::string("none found") : why(e)) +
                                "); use the cpu or vulkan backend on this machine");
    auto chosen = select_devices(p, static_cast<size_t>(count), "cuda");
    if (!chosen) return chosen.status();
    std::vector<std::unique_ptr<CudaDevice>> devs;
    for (size_t i : chosen.value()) {
      auto d = CudaDevice::create(static_cast<int>(i));
      if (!d) return d.status();
      devs.push_back(std::move(d.value()));
    }
    return std::make_unique<CudaBackend>(std::move(devs));
  });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "cuda";
    pd.version = "0.2.0";
    pd.summary = "NVIDIA GPUs through CUDA";
    ComponentDesc c;
    c.kind = ComponentKind::backend;
    c.name = "cuda";
    c.version = "0.2.0";
    c.rank = 100;  // preferred over vulkan on NVIDIA hardware
    c.summary = "NVIDIA GPU memory, streams and kernels";
    // The weight types the matmul kernels read natively; the bare trait when there are none,
    // so the loader's conversion plan knows such weights run elsewhere.
    const auto types = native_weight_types();
    if (types.empty()) c.traits.emplace_back(kTraitNativePrefix);
    for (const auto& t : types) c.traits.push_back(std::string(kTraitNativePrefix) + t);
    c.factory = make_cuda;
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::cuda

SWITCHYARD_PLUGIN(sy::cuda::describe)
