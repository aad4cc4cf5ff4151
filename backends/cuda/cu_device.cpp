#include "cu_device.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "kernels/kernel.hpp"

namespace sy::cuda {
namespace {

// Pinned memory every copy between host and device goes through: large enough that weight
// uploads stream in big pieces, small next to any machine's RAM.
constexpr size_t kStagingBytes = size_t{64} << 20;

bool env_is(const char* name, std::string_view value) {
  const char* v = std::getenv(name);
  return v && value == v;
}

}  // namespace

Result<std::unique_ptr<CudaDevice>> CudaDevice::create(int ordinal) {
  std::unique_ptr<CudaDevice> d(new CudaDevice(ordinal));
  cudaDeviceProp prop{};
  if (auto e = cudaGetDeviceProperties(&prop, ordinal)) return error::unavailable(d->name_ + ": " + why(e));
  d->features_.cc_major = prop.major;
  d->features_.cc_minor = prop.minor;
  // SWITCHYARD_CUDA_PATH=portable runs the portable kernels only, so tests reach them on any GPU.
  d->features_.portable_only = env_is("SWITCHYARD_CUDA_PATH", "portable");
  auto q = Queue::create(ordinal, kStagingBytes);
  if (!q) return q.status();
  d->queue_ = std::move(q.value());
  // The device's pool keeps freed memory for the next allocation instead of returning it to
  // the driver at each synchronisation: steps allocate and free their arenas in order.
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceGetDefaultMemPool(&pool, ordinal) == cudaSuccess) {
    uint64_t keep = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  // SWITCHYARD_CUDA_GRAPHS=0 launches every kernel eagerly (debugging, profiling).
  const bool graphs = !env_is("SWITCHYARD_CUDA_GRAPHS", "0");
  d->executor_ = std::make_unique<Executor>(*d->queue_, d->features_, d->name_, graphs);
  return d;
}

CudaDevice::~CudaDevice() {
  executor_.reset();  // waits for the stream, frees graphs and records
  queue_.reset();
}

DeviceInfo CudaDevice::info() const noexcept {
  DeviceInfo d;
  d.name = name_;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, ordinal_) == cudaSuccess) {
    d.description = prop.name;
    d.kind = prop.integrated ? DeviceKind::integrated_gpu : DeviceKind::discrete_gpu;
  }
  (void)queue_->bind();
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    d.total_memory = total_b;
    d.free_memory = free_b;
  }
  d.features.push_back("compute capability " + std::to_string(features_.cc_major) + "." + std::to_string(features_.cc_minor));
  if (features_.portable_only) d.features.push_back("portable kernels only (SWITCHYARD_CUDA_PATH=portable)");
  else
    for (const KernelDef* k : all_kernels())
      if (!k->path.empty() && std::find(d.features.begin(), d.features.end(), "path " + std::string(k->path)) == d.features.end())
        d.features.push_back("path " + std::string(k->path));
  d.features.push_back(std::string("CUDA graphs for repeated steps: ") +
                       (env_is("SWITCHYARD_CUDA_GRAPHS", "0") ? "off (SWITCHYARD_CUDA_GRAPHS=0)" : "on"));
  return d;
}

Result<std::unique_ptr<Buffer>> CudaDevice::allocate(size_t bytes, BufferKind kind) noexcept {
  try {
    return CudaBuffer::create(*queue_, bytes, kind, name_);
  } catch (const std::bad_alloc&) {
    return error::out_of_memory(name_ + ": out of host memory for a buffer object");
  }
}

Support CudaDevice::supports(const GraphNode& node, std::span<const GraphTensor> tensors) const noexcept {
  return executor_->supports(node, tensors);
}

Status CudaDevice::execute(const SubGraph& graph) noexcept {
  try {
    return executor_->execute(graph);
  } catch (const std::bad_alloc&) {
    return error::out_of_memory(name_ + ": out of host memory while queueing a step");
  }
}

Result<CudaBuffer*> CudaDevice::own(Buffer& b, size_t offset, size_t bytes, const char* what) const {
  auto* cb = dynamic_cast<CudaBuffer*>(&b);
  if (!cb || &cb->queue() != queue_.get())
    return error::invalid_argument(name_ + ": " + what + " names a buffer of another device");
  if (!cb->device_address()) return error::invalid_argument(name_ + ": " + what + " names a staging buffer (host memory only)");
  if (!cb->covers(offset, bytes))
    return error::invalid_argument(name_ + ": " + what + " reaches past the end of a " + std::to_string(cb->size()) + "-byte buffer");
  return cb;
}

Status CudaDevice::copy_to_device(Buffer& dst, size_t offset, std::span<const std::byte> src) noexcept {
  auto cb = own(dst, offset, src.size(), "a copy to the device");
  if (!cb) return cb.status();
  if (auto st = queue_->bind(); !st) return st;
  return queue_->copy_to_device(static_cast<std::byte*>(cb.value()->device_address()) + offset, src);
}

Status CudaDevice::copy_to_host(Buffer& src, size_t offset, std::span<std::byte> dst) noexcept {
  auto cb = own(src, offset, dst.size(), "a copy to the host");
  if (!cb) return cb.status();
  if (auto st = queue_->bind(); !st) return st;
  return queue_->copy_to_host(static_cast<const std::byte*>(cb.value()->device_address()) + offset, dst);
}

uint64_t CudaDevice::record_event() noexcept {
  // A failure breaks the queue for good: the wait for this value reports it (0 would mean
  // "nothing queued" and hide it).
  if (!queue_->bind()) return UINT64_MAX;
  auto ev = queue_->record_event();
  return ev ? ev.value() : UINT64_MAX;
}

Status CudaDevice::wait_event(uint64_t event) noexcept {
  if (auto st = queue_->bind(); !st) return st;
  return queue_->wait(event);
}

Status CudaDevice::synchronize() noexcept {
  if (auto st = queue_->bind(); !st) return st;
  return queue_->synchronize();
}

}  // namespace sy::cuda
