#include "convert/native.hpp"

#include <algorithm>

namespace sy::convert {

DeviceTypes declared_types(const registry::ComponentManifest& backend, std::string name, const Device* device) {
  DeviceTypes t;
  t.name = std::move(name);
  t.device = device;
  const std::string_view prefix = kTraitNativePrefix;
  for (const auto& trait : backend.traits) {
    if (trait == kTraitGenericKernel) t.generic = true;
    if (trait.compare(0, prefix.size(), prefix) != 0) continue;
    t.declared = true;  // a bare "native:" declares that there are none (a backend without kernels yet)
    if (const auto type = storage_type_from_name(std::string_view(trait).substr(prefix.size())))
      if (std::find(t.native.begin(), t.native.end(), *type) == t.native.end()) t.native.push_back(*type);
  }
  return t;
}

}  // namespace sy::convert
