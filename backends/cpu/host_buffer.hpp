// Host memory for the CPU backend: page-aligned, so any kernel alignment is satisfied
// and large buffers can be backed by huge pages.
#pragma once

#include <cstddef>
#include <memory>

#include "switchyard/backend.hpp"

namespace sy::cpu {

class HostBuffer final : public Buffer {
 public:
  /// Allocates `bytes` (rounded up to the alignment); error when memory is exhausted.
  static Result<std::unique_ptr<Buffer>> create(size_t bytes, BufferKind kind = BufferKind::device_local) noexcept;
  ~HostBuffer() override;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  size_t size() const noexcept override { return size_; }
  BufferKind kind() const noexcept override { return kind_; }
  Status upload(size_t offset, std::span<const std::byte> src) noexcept override;
  Status download(size_t offset, std::span<std::byte> dst) const noexcept override;
  void* host_data() noexcept override { return data_; }

  static constexpr size_t kAlignment = 4096;
  static constexpr size_t kHugePage = size_t{2} << 20;  ///< x86-64's transparent huge page

 private:
  HostBuffer(void* data, size_t size, BufferKind kind) : data_(data), size_(size), kind_(kind) {}
  void* data_;
  size_t size_;
  BufferKind kind_;
};

}  // namespace sy::cpu
