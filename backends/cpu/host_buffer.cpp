#include "host_buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace sy::cpu {

Result<std::unique_ptr<Buffer>> HostBuffer::create(size_t bytes, BufferKind kind) noexcept {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes) return error::invalid_argument("cpu: buffer size " + std::to_string(bytes) + " overflows");
  void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (!p) return error::out_of_memory("cpu: could not allocate " + std::to_string(bytes) + " bytes of host memory");
  try {
    return std::unique_ptr<Buffer>(new HostBuffer(p, bytes, kind));
  } catch (...) {
    std::free(p);
    return error::out_of_memory("cpu: could not allocate a buffer object");
  }
}

HostBuffer::~HostBuffer() { std::free(data_); }

namespace {
bool in_range(size_t offset, size_t n, size_t size) { return offset <= size && n <= size - offset; }
}  // namespace

Status HostBuffer::upload(size_t offset, std::span<const std::byte> src) noexcept {
  if (!in_range(offset, src.size(), size_))
    return error::invalid_argument("cpu: upload of " + std::to_string(src.size()) + " bytes at offset " +
                                   std::to_string(offset) + " exceeds the buffer size " + std::to_string(size_));
  if (!src.empty()) std::memcpy(static_cast<std::byte*>(data_) + offset, src.data(), src.size());
  return Status::ok();
}

Status HostBuffer::download(size_t offset, std::span<std::byte> dst) const noexcept {
  if (!in_range(offset, dst.size(), size_))
    return error::invalid_argument("cpu: download of " + std::to_string(dst.size()) + " bytes at offset " +
                                   std::to_string(offset) + " exceeds the buffer size " + std::to_string(size_));
  if (!dst.empty()) std::memcpy(dst.data(), static_cast<const std::byte*>(data_) + offset, dst.size());
  return Status::ok();
}

}  // namespace sy::cpu
