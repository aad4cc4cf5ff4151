// Declares the next ABI major version: the registry must refuse it.
#include "common.hpp"

namespace {
const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.abi_major = sy::kAbiMajor + 1;
    pd.name = "test-abi";
    pd.version = "1.0.0";
    pd.components.push_back(sy::testplugins::fixed_sampler("test_future"));
    return pd;
  }();
  return &d;
}
}  // namespace
SWITCHYARD_PLUGIN(describe)
