// The storage and reference-conversion functions of the SDK, answered by the host services:
// the runtime's type registry, directly in the runtime and through attach in a plugin.
#include "switchyard/storage.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "switchyard/quant.hpp"
#include "switchyard/types.hpp"

namespace sy {
namespace {

const HostServices* services() noexcept { return detail::host(); }

Status detached() {
  return error::unavailable(
      "storage types are unavailable: this plugin was not attached to a Switchyard runtime (load it through the "
      "runtime's registry)");
}

Status check_row(const StorageTypeInfo& info, int64_t n) {
  if (n < 0 || n % info.block_size != 0)
    return error::invalid_argument(std::to_string(n) + " elements is not a whole number of " + std::string(info.name) +
                                   " blocks (" + std::to_string(info.block_size) + " elements each)");
  return Status::ok();
}

}  // namespace

std::vector<const StorageTypeInfo*> storage_types() {
  std::vector<const StorageTypeInfo*> all;
  if (const auto* h = services())
    for (size_t i = 0, n = h->type_count(); i < n; ++i)
      if (const auto* t = h->type_at(i)) all.push_back(t);
  return all;
}

const StorageTypeInfo* storage_type_info(uint32_t id) noexcept {
  const auto* h = services();
  return h ? h->type_by_id(id) : nullptr;
}

const StorageTypeInfo& storage_type_info(StorageType type) noexcept {
  if (const auto* info = storage_type_info(static_cast<uint32_t>(type))) return *info;
  // Ids from files and pipelines are checked where they enter (the id overload), so an
  // unknown one here is a bug; answering another type's geometry would corrupt memory.
  std::fprintf(stderr, "switchyard: internal error: storage type id %u is not registered%s\n",
               static_cast<unsigned>(type), services() ? "" : " (no storage-type registry is attached)");
  std::abort();
}

std::optional<StorageType> storage_type_from_name(std::string_view name) noexcept {
  const auto* h = services();
  const auto* info = h ? h->type_by_name(name.data(), name.size()) : nullptr;
  return info ? std::optional(info->type) : std::nullopt;
}

std::string_view storage_type_name(StorageType type) noexcept {
  const auto* info = storage_type_info(static_cast<uint32_t>(type));
  return info ? info->name : std::string_view("?");
}

std::optional<uint64_t> storage_row_bytes(StorageType type, uint64_t n) noexcept {
  const auto* info = storage_type_info(static_cast<uint32_t>(type));
  if (!info || n % info->block_size != 0) return std::nullopt;
  const uint64_t blocks = n / info->block_size;
  if (blocks > UINT64_MAX / info->block_bytes) return std::nullopt;
  return blocks * info->block_bytes;
}

std::string_view storage_type_provider(StorageType type) noexcept {
  const auto* h = services();
  const char* p = h ? h->type_provider(static_cast<uint32_t>(type)) : nullptr;
  return p ? std::string_view(p) : std::string_view();
}

const StorageTypeDesc* storage_type_desc(StorageType type) noexcept {
  const auto* h = services();
  return h ? h->type_desc(static_cast<uint32_t>(type)) : nullptr;
}

bool can_dequantize(StorageType t) noexcept {
  const auto* d = storage_type_desc(t);
  return d && d->dequantize_row;
}

Status dequantize_row(StorageType t, const void* src, float* dst, int64_t n) noexcept {
  if (!services()) return detached();
  const auto* info = storage_type_info(static_cast<uint32_t>(t));
  if (!info) return error::invalid_argument("storage type id " + std::to_string(static_cast<uint32_t>(t)) + " is not registered");
  if (!can_dequantize(t)) return error::unsupported("no reference dequantizer for storage type " + std::string(info->name));
  if (auto st = check_row(*info, n); !st) return st;
  storage_type_desc(t)->dequantize_row(src, dst, n);
  return Status::ok();
}

bool can_quantize(StorageType t) noexcept {
  const auto* d = storage_type_desc(t);
  return d && d->quantize_row;
}

Status quantize_row(StorageType t, const float* src, void* dst, int64_t n) noexcept {
  if (!services()) return detached();
  const auto* info = storage_type_info(static_cast<uint32_t>(t));
  if (!info) return error::invalid_argument("storage type id " + std::to_string(static_cast<uint32_t>(t)) + " is not registered");
  if (!can_quantize(t)) return error::unsupported("no quantizer for storage type " + std::string(info->name));
  if (auto st = check_row(*info, n); !st) return st;
  storage_type_desc(t)->quantize_row(src, dst, n);
  return Status::ok();
}

bool can_quantize_weighted(StorageType t) noexcept {
  const auto* d = storage_type_desc(t);
  return d && d->quantize_row_weighted;
}

Status quantize_row_weighted(StorageType t, const float* src, void* dst, int64_t n, const float* weights) noexcept {
  if (!services()) return detached();
  const auto* info = storage_type_info(static_cast<uint32_t>(t));
  if (!info) return error::invalid_argument("storage type id " + std::to_string(static_cast<uint32_t>(t)) + " is not registered");
  if (!can_quantize_weighted(t)) return error::unsupported("no weighted quantizer for storage type " + std::string(info->name));
  if (auto st = check_row(*info, n); !st) return st;
  storage_type_desc(t)->quantize_row_weighted(src, dst, n, weights);
  return Status::ok();
}

}  // namespace sy
