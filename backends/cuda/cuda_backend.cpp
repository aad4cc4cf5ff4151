// The CUDA backend: NVIDIA GPUs through the CUDA runtime (linked statically, so loading
// this plugin needs no CUDA library; the driver is looked up when a device is first used).
// Kernels arrive with the CUDA backend work; until then devices report no op support.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "switchyard/backend.hpp"
#include "switchyard/plugin.hpp"

namespace sy::cuda {
namespace {

std::string why(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(int device, void* ptr, size_t size) : device_(device), ptr_(ptr), size_(size) {}
  ~CudaBuffer() override {
    cudaSetDevice(device_);
    cudaFree(ptr_);
  }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  size_t size() const noexcept override { return size_; }
  Status upload(size_t offset, std::span<const std::byte> src) noexcept override {
    if (offset > size_ || src.size() > size_ - offset)
      return error::invalid_argument("cuda: upload beyond the end of a " + std::to_string(size_) + "-byte buffer");
    cudaSetDevice(device_);
    if (auto e = cudaMemcpy(static_cast<std::byte*>(ptr_) + offset, src.data(), src.size(), cudaMemcpyHostToDevice))
      return error::io_error("cuda: upload failed (" + why(e) + ")");
    return Status::ok();
  }
  Status download(size_t offset, std::span<std::byte> dst) const noexcept override {
    if (offset > size_ || dst.size() > size_ - offset)
      return error::invalid_argument("cuda: download beyond the end of a " + std::to_string(size_) + "-byte buffer");
    cudaSetDevice(device_);
    if (auto e = cudaMemcpy(dst.data(), static_cast<const std::byte*>(ptr_) + offset, dst.size(), cudaMemcpyDeviceToHost))
      return error::io_error("cuda: download failed (" + why(e) + ")");
    return Status::ok();
  }

 private:
  int device_;
  void* ptr_;
  size_t size_;
};

class CudaDevice final : public Device {
 public:
  CudaDevice(int ordinal, size_t index) : ordinal_(ordinal), index_(index) {}
  DeviceInfo info() const noexcept override {
    DeviceInfo d;
    d.name = "cuda" + std::to_string(index_);
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, ordinal_) == cudaSuccess) {
      d.description = prop.name;
      d.kind = prop.integrated ? DeviceKind::integrated_gpu : DeviceKind::discrete_gpu;
      // Integrated GPUs share RAM, but cudaMalloc memory is still not mapped for the
      // host: unified_memory stays false until managed allocations are used (issue 20).
    }
    size_t free_b = 0, total_b = 0;
    cudaSetDevice(ordinal_);
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
      d.total_memory = total_b;
      d.free_memory = free_b;
    }
    return d;
  }
  Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferKind kind) noexcept override {
    if (kind != BufferKind::device_local)
      return error::unsupported("cuda" + std::to_string(index_) + ": " + std::string(buffer_kind_name(kind)) +
                                " buffers arrive with the CUDA kernels (issue 20)");
    cudaSetDevice(ordinal_);
    void* p = nullptr;
    if (auto e = cudaMalloc(&p, bytes == 0 ? 1 : bytes))
      return error::out_of_memory("cuda" + std::to_string(index_) + ": cannot allocate " + std::to_string(bytes) +
                                  " bytes (" + why(e) + ")");
    try {
      return std::unique_ptr<Buffer>(new CudaBuffer(ordinal_, p, bytes));
    } catch (...) {
      cudaFree(p);
      return error::out_of_memory("cuda: could not allocate a buffer object");
    }
  }
  Support supports(const GraphNode&, std::span<const GraphTensor>) const noexcept override { return Support::no; }
  Status execute(const SubGraph&) noexcept override {
    return error::unsupported("cuda: graph execution is not implemented yet");
  }

 private:
  int ordinal_;
  size_t index_;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::vector<CudaDevice> devices) : devices_(std::move(devices)) {}
  size_t device_count() const noexcept override { return devices_.size(); }
  Device& device(size_t i) noexcept override { return devices_[i]; }

 private:
  std::vector<CudaDevice> devices_;
};

Result<std::unique_ptr<Component>> make_cuda(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    int count = 0;
    if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0)
      return error::unavailable("cuda: no usable CUDA device (" + (e == cudaSuccess ? std::string("none found") : why(e)) +
                                "); use the cpu or vulkan backend on this machine");
    auto chosen = select_devices(p, static_cast<size_t>(count), "cuda");
    if (!chosen) return chosen.status();
    std::vector<CudaDevice> devs;
    for (size_t i : chosen.value()) devs.emplace_back(static_cast<int>(i), i);
    return std::make_unique<CudaBackend>(std::move(devs));
  });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "cuda";
    pd.version = "0.1.0";
    pd.summary = "NVIDIA GPUs through CUDA";
    ComponentDesc c;
    c.kind = ComponentKind::backend;
    c.name = "cuda";
    c.version = "0.1.0";
    c.rank = 100;  // preferred over vulkan on NVIDIA hardware
    c.summary = "NVIDIA GPU memory and kernels";
    // No native types yet (no kernels): the bare trait says so, so the loader's conversion
    // plan knows every type would have to run elsewhere. Kernels add "native:<TYPE>" here.
    c.traits.emplace_back(kTraitNativePrefix);
    c.factory = make_cuda;
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::cuda

SWITCHYARD_PLUGIN(sy::cuda::describe)
