// Opening the device under test and the reference.
#include <cstdlib>

#include "conformance/suite_internal.hpp"

namespace sy::conformance {

ScalarIsa::ScalarIsa() {
  if (const char* v = std::getenv("SWITCHYARD_CPU_ISA")) saved_ = v;
  ::setenv("SWITCHYARD_CPU_ISA", "scalar", 1);
}

ScalarIsa::~ScalarIsa() {
  if (saved_) ::setenv("SWITCHYARD_CPU_ISA", saved_->c_str(), 1);
  else ::unsetenv("SWITCHYARD_CPU_ISA");
}

Result<OpenedDevice> open_device(registry::Registry& reg, const std::string& name, int64_t index) {
  const auto* rec = reg.find(ComponentKind::backend, name);
  if (!rec) {
    std::string have;
    for (const auto& n : reg.names(ComponentKind::backend)) have += (have.empty() ? "" : ", ") + n;
    return error::not_found("no backend plugin named '" + name + "' is installed (installed: " +
                            (have.empty() ? "none" : have) + "); --plugin-path adds a folder to search");
  }
  if (!rec->available) return error::unavailable("backend " + name + " is unavailable here: " + rec->unavailable_reason);
  if (index < 0) return error::invalid_argument("--device must be 0 or more, got " + std::to_string(index));
  ParamMap params;
  for (const auto& p : reg.manifest(*rec).params)
    if (p.def) params.set(p.name, *p.def);
  params.set("devices", std::vector<int64_t>{index});
  auto be = reg.create_backend(name, params);
  if (!be) {
    // An index past the devices is the caller's mistake; anything else means no device here.
    const StatusCode code = be.status().code() == StatusCode::invalid_argument ? StatusCode::invalid_argument
                                                                               : StatusCode::unavailable;
    return Status(code, "backend " + name + ": " + be.status().message());
  }
  if ((*be)->device_count() == 0) return error::unavailable("backend " + name + " has no device here");
  OpenedDevice d;
  d.device = &(*be)->device(0);  // the only one selected
  d.backend = std::move(*be);
  return d;
}

Result<OpenedDevice> open_scalar_cpu(registry::Registry& reg) {
  const ScalarIsa scalar;
  auto d = open_device(reg, "cpu", 0);
  if (!d) return Status(d.status().code(), "the CPU reference: " + d.status().message());
  return d;
}

}  // namespace sy::conformance
