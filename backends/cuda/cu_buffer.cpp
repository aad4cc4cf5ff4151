#include "cu_buffer.hpp"

#include <cstring>
#include <string>

namespace sy::cuda {

Result<std::unique_ptr<Buffer>> CudaBuffer::create(Queue& queue, size_t bytes, BufferKind kind, std::string_view device) {
  if (auto st = queue.bind(); !st) return st;
  std::unique_ptr<CudaBuffer> b(new CudaBuffer(queue, bytes, kind));
  const size_t n = bytes == 0 ? 1 : bytes;
  auto oom = [&](cudaError_t e) {
    return error::out_of_memory(std::string(device) + ": cannot allocate " + std::to_string(bytes) + " bytes of " +
                                std::string(buffer_kind_name(kind)) + " memory (" + why(e) + ")");
  };
  switch (kind) {
    case BufferKind::device_local: {
      auto lock = queue.hold();  // never inside another thread's stream capture
      if (auto e = cudaMallocAsync(&b->device_, n, queue.stream())) return oom(e);
      break;
    }
    case BufferKind::host_mapped:
      if (auto e = cudaHostAlloc(&b->host_, n, cudaHostAllocMapped)) return oom(e);
      if (auto e = cudaHostGetDevicePointer(&b->device_, b->host_, 0)) return oom(e);
      break;
    case BufferKind::staging:
      if (auto e = cudaMallocHost(&b->host_, n)) return oom(e);
      break;
  }
  return std::unique_ptr<Buffer>(std::move(b));
}

CudaBuffer::~CudaBuffer() {
  (void)queue_.bind();
  if (kind_ == BufferKind::device_local) {
    auto lock = queue_.hold();
    if (device_) cudaFreeAsync(device_, queue_.stream());
  } else if (host_) {
    cudaFreeHost(host_);
  }
}

Status CudaBuffer::upload(size_t offset, std::span<const std::byte> src) noexcept {
  if (!covers(offset, src.size()))
    return error::invalid_argument("cuda: upload beyond the end of a " + std::to_string(size_) + "-byte buffer");
  Queue& q = queue_;  // a reference member: usable from const functions
  if (auto st = q.bind(); !st) return st;
  if (auto st = q.synchronize(); !st) return st;  // queued kernels may still read what is overwritten
  if (kind_ != BufferKind::device_local) {
    std::memcpy(static_cast<std::byte*>(host_) + offset, src.data(), src.size());
    return Status::ok();
  }
  if (auto st = q.copy_to_device(static_cast<std::byte*>(device_) + offset, src); !st) return st;
  return q.synchronize();
}

Status CudaBuffer::download(size_t offset, std::span<std::byte> dst) const noexcept {
  if (!covers(offset, dst.size()))
    return error::invalid_argument("cuda: download beyond the end of a " + std::to_string(size_) + "-byte buffer");
  Queue& q = queue_;  // a reference member: usable from const functions
  if (auto st = q.bind(); !st) return st;
  if (auto st = q.synchronize(); !st) return st;  // queued kernels may still write it
  if (kind_ != BufferKind::device_local) {
    std::memcpy(dst.data(), static_cast<const std::byte*>(host_) + offset, dst.size());
    return Status::ok();
  }
  if (auto st = q.copy_to_host(static_cast<const std::byte*>(device_) + offset, dst); !st) return st;
  return q.synchronize();
}

}  // namespace sy::cuda
