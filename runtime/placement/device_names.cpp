#include "placement/device_names.hpp"

namespace sy::placement {

std::vector<NamedDevice> name_devices(const std::vector<Device*>& devices, int host) {
  std::vector<NamedDevice> out;
  int gpus = 0;
  for (size_t d = 0; d < devices.size(); ++d) {
    const std::string own = devices[d]->info().name;
    if (static_cast<int>(d) == host) out.push_back({"cpu", own, false});
    else out.push_back({"gpu" + std::to_string(gpus++), own, true});
  }
  return out;
}

Result<std::string> resolve_device(const std::string& name, const std::vector<NamedDevice>& devices) {
  for (const auto& d : devices)
    if (d.portable == name || d.own == name) return d.portable;
  std::string have;
  for (const auto& d : devices)
    have += (have.empty() ? "" : ", ") + (d.portable == d.own ? d.own : d.portable + " (" + d.own + ")");
  return error::invalid_argument("device '" + name + "' does not exist on this machine; the pipeline's backends have " +
                                 have + " (see `switchyard run --list-devices`)");
}

std::vector<planner::DeviceSpec> device_specs(const std::vector<Device*>& devices, const std::vector<NamedDevice>& names) {
  std::vector<planner::DeviceSpec> out;
  for (size_t d = 0; d < devices.size(); ++d)
    out.push_back({names[d].portable, names[d].gpu, devices[d]->info().free_memory, 0, "assumed"});
  return out;
}

}  // namespace sy::placement
