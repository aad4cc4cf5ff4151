// The host services the runtime hands each plugin at load: its storage-type registry.
#pragma once

#include "switchyard/types.hpp"

namespace sy::types {

/// The table over TypeRegistry::process(); valid for the life of the process.
const HostServices& host_services() noexcept;

}  // namespace sy::types
