// Pieces of the suite shared by its files: opening the device under test and the scalar
// CPU reference, and the fixture part.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "conformance/suite.hpp"
#include "registry/registry.hpp"

namespace sy::conformance {

struct OpenedDevice {
  registry::Owned<Backend> backend;
  Device* device = nullptr;
};

/// Device `index` of backend `name`, created with its manifest's defaults.
Result<OpenedDevice> open_device(registry::Registry& reg, const std::string& name, int64_t index);

/// The CPU backend with its scalar kernels: the reference every device is compared with.
Result<OpenedDevice> open_scalar_cpu(registry::Registry& reg);

/// SWITCHYARD_CPU_ISA=scalar while it lives (the CPU backend reads it when created).
class ScalarIsa {
 public:
  ScalarIsa();
  ~ScalarIsa();
  ScalarIsa(const ScalarIsa&) = delete;
  ScalarIsa& operator=(const ScalarIsa&) = delete;

 private:
  std::optional<std::string> saved_;
};

/// Every fixture of o.fixtures: teacher-forced on the backend, and free-running greedy
/// against the scalar CPU's ids. Appends to report.fixtures, a line per fixture to `progress`.
void run_fixtures(const Options& o, const registry::Registry& reg, Report& report, std::ostream& progress);

}  // namespace sy::conformance
