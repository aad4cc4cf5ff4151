// Running one case on a device the way the scheduler drives it: every tensor in a
// device_local buffer of that device, filled by copy_to_device, the node executed, the
// outputs brought back by copy_to_host, with synchronize() and an event in between. So a
// device that reads host memory it was never given, forgets an offset, or finishes a copy
// late shows up as a wrong result.
#pragma once

#include <vector>

#include "conformance/cases.hpp"
#include "switchyard/backend.hpp"

namespace sy::conformance {

/// The compared tensors of a case after a run, in case order: each as its logical
/// elements (innermost first), dequantized for block types, ids as numbers.
struct Outputs {
  std::vector<int32_t> tensor;              ///< index into Case::tensors
  std::vector<std::vector<double>> values;  ///< parallel to `tensor`
};

/// The device's answer for the case's node (memory unassigned, as at planning time).
Support ask(const Device& dev, const Case& c);

/// Runs the case on `dev`. Errors name the step (allocation, upload, execution, download)
/// and carry the device's message.
Result<Outputs> run_case(Device& dev, const Case& c);

/// The logical elements of tensor `t` as doubles, read from its buffer's bytes `bytes`.
Result<std::vector<double>> values_of(const GraphTensor& t, std::span<const std::byte> bytes);

}  // namespace sy::conformance
