// The names placement uses for a started pipeline's devices: the cpu backend's device is
// "cpu", and every device of the GPU backends is gpuN in pipeline order, whichever backend
// drives it, so a pipeline written on a CUDA machine runs unchanged on a Vulkan one. A
// backend's own names (cuda0, vulkan1) stay valid for pinning and resolve to their gpuN.
#pragma once

#include <string>
#include <vector>

#include "planner/planner.hpp"
#include "switchyard/backend.hpp"
#include "switchyard/status.hpp"

namespace sy::placement {

struct NamedDevice {
  std::string portable;  ///< "cpu", "gpu0", ...
  std::string own;       ///< the backend's name: "cpu", "vulkan0", ...
  bool gpu = false;
};

/// Portable names for `devices` (scheduler order); `host` is the cpu backend's device.
std::vector<NamedDevice> name_devices(const std::vector<Device*>& devices, int host);

/// The portable name of a device a pipeline names ("cpu", "gpu1", "vulkan0"), or an error
/// sentence listing the devices there are.
Result<std::string> resolve_device(const std::string& name, const std::vector<NamedDevice>& devices);

/// Planner device specs for `devices`: budgets from the free memory each reports now.
std::vector<planner::DeviceSpec> device_specs(const std::vector<Device*>& devices, const std::vector<NamedDevice>& names);

}  // namespace sy::placement
