// CUDA memory behind the SDK's Buffer, by kind: device_local from the device's stream-ordered
// pool (cudaMallocAsync, freed back to the pool, which keeps the memory for the next
// allocation), host_mapped pinned host memory the kernels read through its device alias,
// and staging pinned memory only the host touches.
#pragma once

#include "cu_queue.hpp"
#include "switchyard/backend.hpp"

namespace sy::cuda {

class CudaBuffer final : public Buffer {
 public:
  static Result<std::unique_ptr<Buffer>> create(Queue& queue, size_t bytes, BufferKind kind, std::string_view device);
  ~CudaBuffer() override;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  size_t size() const noexcept override { return size_; }
  BufferKind kind() const noexcept override { return kind_; }
  Status upload(size_t offset, std::span<const std::byte> src) noexcept override;
  Status download(size_t offset, std::span<std::byte> dst) const noexcept override;
  void* host_data() noexcept override { return kind_ == BufferKind::device_local ? nullptr : host_; }

  /// The address kernels use (null for staging memory, which kernels never touch).
  [[nodiscard]] void* device_address() const { return device_; }
  [[nodiscard]] const Queue& queue() const { return queue_; }
  /// `bytes` at `offset` lie inside the buffer.
  [[nodiscard]] bool covers(size_t offset, size_t bytes) const { return offset <= size_ && bytes <= size_ - offset; }

 private:
  CudaBuffer(Queue& q, size_t size, BufferKind kind) : queue_(q), size_(size), kind_(kind) {}
  Queue& queue_;
  size_t size_;
  BufferKind kind_;
  void* device_ = nullptr;  ///< device_local and host_mapped
  void* host_ = nullptr;    ///< host_mapped and staging
};

}  // namespace sy::cuda
