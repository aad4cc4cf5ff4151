// Provides 'test_fixed' again (a clash with test-good) plus one unique sampler.
#include "common.hpp"

namespace {
const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "test-dup";
    pd.version = "1.0.0";
    pd.components.push_back(sy::testplugins::fixed_sampler("test_fixed"));
    pd.components.push_back(sy::testplugins::fixed_sampler("test_unique"));
    return pd;
  }();
  return &d;
}
}  // namespace
SWITCHYARD_PLUGIN(describe)
