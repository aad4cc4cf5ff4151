// A well-formed plugin: two samplers, used to test lazy loading and creation.
#include "common.hpp"

namespace {
const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "test-good";
    pd.version = "1.2.3";
    pd.components.push_back(sy::testplugins::fixed_sampler("test_fixed"));
    pd.components.push_back(sy::testplugins::fixed_sampler("test_other"));
    return pd;
  }();
  return &d;
}
}  // namespace
SWITCHYARD_PLUGIN(describe)
