// The plugin side of the host services: the runtime hands its table over once, at load,
// before any component is created (registry::Registry::load).
#include "switchyard/types.hpp"

namespace sy::detail {
namespace {
// Written once by attach_host, before any factory of this plugin runs; read-only after.
const HostServices* g_host = nullptr;
}  // namespace

void attach_host(const HostServices* host) noexcept { g_host = host; }

const HostServices* host() noexcept { return g_host; }

}  // namespace sy::detail
