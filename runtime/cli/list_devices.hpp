// `--list-devices` (llama.cpp's flag): every installed backend's devices with their
// memory, or why the backend has none here.
#pragma once

#include <iosfwd>

namespace sy::cli {

/// Prints the list to `out`; returns the exit status (0: at least one backend listed).
int list_devices(std::ostream& out);

}  // namespace sy::cli
