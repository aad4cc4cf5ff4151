// The plugin side of the host services: the runtime hands its table over at load, before
// any component is created (registry::Registry::load). Two registries in one process may
// load the same library and attach it again, with the same table, while its code runs:
// hence an atomic.
#include <atomic>

#include "switchyard/plugin.hpp"
#include "switchyard/types.hpp"

namespace sy::detail {
namespace {
std::atomic<const HostServices*> g_host{nullptr};
}  // namespace

void attach_host(const HostServices* host) noexcept {
  // A host of another major version, or one whose table is shorter than this SDK reads,
  // is not used: the storage functions then say the plugin is not attached.
  if (host == nullptr || host->struct_size < sizeof(HostServices) || host->abi_major != kAbiMajor) return;
  g_host.store(host, std::memory_order_release);
}

const HostServices* host() noexcept { return g_host.load(std::memory_order_acquire); }

}  // namespace sy::detail
