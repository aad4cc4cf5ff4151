#include "host_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace sy::cpu {

Result<std::unique_ptr<Buffer>> HostBuffer::create(size_t bytes, BufferKind kind) noexcept {
  // Buffers of a huge page or more (the weight pool's chunks) are aligned to huge pages and
  // advised to use them: a GEMV streams gigabytes through them, and with 4 KiB pages every
  // 4 KiB costs a TLB miss (the kernel's THP mode is often `madvise`, so nothing happens
  // without the advice). The advice is a hint; a kernel without THP ignores it.
  const size_t align = bytes >= kHugePage ? kHugePage : kAlignment;
  const size_t rounded = (bytes + align - 1) / align * align;
  if (rounded < bytes) return error::invalid_argument("cpu: buffer size " + std::to_string(bytes) + " overflows");
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  if (!p) return error::out_of_memory("cpu: could not allocate " + std::to_string(bytes) + " bytes of host memory");
  if (align == kHugePage) (void)madvise(p, rounded, MADV_HUGEPAGE);
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
