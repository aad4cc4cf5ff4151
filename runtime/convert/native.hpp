// What a backend says it computes: its manifest's "native:<TYPE>" traits and the CPU's
// "generic_kernel" (plugin.hpp), read into the conversion plan's DeviceTypes.
#pragma once

#include <string>
#include <vector>

#include "convert/plan.hpp"
#include "registry/manifest.hpp"

namespace sy::convert {

/// The device types a backend component declares. Type names that no registered type has
/// are skipped (a type of a plugin that is not installed). `device` may be null.
DeviceTypes declared_types(const registry::ComponentManifest& backend, std::string name, const Device* device);

}  // namespace sy::convert
