#include "types/table.hpp"

namespace sy::types {

std::optional<std::string> table_problem(const StorageTypeTable& t) {
  constexpr uint32_t kMaxTypes = 4096;
  constexpr uint32_t kMaxEntry = 1024;
  const std::string fix = "; rebuild the plugin against this SDK";
  if (t.struct_size < sizeof(StorageTypeTable)) return "exports a storage-type table of an older layout" + fix;
  if (t.count > kMaxTypes) return "declares " + std::to_string(t.count) + " storage types, more than " + std::to_string(kMaxTypes);
  if (t.count > 0 && t.types == nullptr) return "declares storage types but no array of them" + fix;
  if (t.count == 0) return std::nullopt;
  const uint32_t size = t.types[0].struct_size;
  if (size < kMinDescSize || size > kMaxEntry)
    return "declares storage types of struct_size " + std::to_string(size) + fix;
  for (uint32_t i = 1; i < t.count; ++i)
    if (table_entry(t, i).struct_size != size)
      return "declares storage type " + std::to_string(i) + " with another struct_size than the first" + fix;
  return std::nullopt;
}

const StorageTypeDesc& table_entry(const StorageTypeTable& t, uint32_t i) {
  const size_t stride = t.types[0].struct_size;
  return *reinterpret_cast<const StorageTypeDesc*>(reinterpret_cast<const std::byte*>(t.types) + i * stride);
}

}  // namespace sy::types
