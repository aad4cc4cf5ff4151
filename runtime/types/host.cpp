#include "types/host.hpp"

#include <string_view>

#include "switchyard/plugin.hpp"
#include "types/type_registry.hpp"

namespace sy {
namespace types {
namespace {

TypeRegistry& reg() { return TypeRegistry::process(); }

const StorageTypeInfo* by_id(uint32_t id) noexcept {
  const auto* e = reg().by_id(id);
  return e ? &e->info : nullptr;
}
const StorageTypeInfo* by_name(const char* name, size_t size) noexcept {
  try {
    const auto* e = reg().by_name(std::string_view(name, size));
    return e ? &e->info : nullptr;
  } catch (...) {
    return nullptr;
  }
}
size_t count() noexcept { return reg().size(); }
const StorageTypeInfo* at(size_t i) noexcept {
  const auto* e = reg().at(i);
  return e ? &e->info : nullptr;
}
const StorageTypeDesc* desc(uint32_t id) noexcept {
  const auto* e = reg().by_id(id);
  return e ? &e->desc : nullptr;
}
const char* provider(uint32_t id) noexcept {
  const auto* e = reg().by_id(id);
  return e ? e->provider.c_str() : nullptr;
}

constexpr HostServices make() {
  HostServices h;
  h.abi_major = kAbiMajor;
  h.abi_minor = kAbiMinor;
  h.type_by_id = by_id;
  h.type_by_name = by_name;
  h.type_count = count;
  h.type_at = at;
  h.type_desc = desc;
  h.type_provider = provider;
  return h;
}
constexpr HostServices kHost = make();

}  // namespace

const HostServices& host_services() noexcept { return kHost; }

}  // namespace types

// The runtime's own copy of the SDK answers from the registry directly.
const HostServices* detail::host() noexcept { return &types::kHost; }

}  // namespace sy
