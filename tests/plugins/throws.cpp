// A factory that throws: the exception must not cross the library boundary.
#include <stdexcept>

#include "common.hpp"

namespace {
sy::Result<std::unique_ptr<sy::Component>> make(const sy::ParamMap&) noexcept {
  return sy::guard_factory([]() -> sy::Result<std::unique_ptr<sy::Component>> {
    throw std::runtime_error("device exploded");
  });
}
const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "test-throws";
    pd.version = "1.0.0";
    auto c = sy::testplugins::fixed_sampler("test_throws");
    c.factory = make;
    pd.components.push_back(c);
    return pd;
  }();
  return &d;
}
}  // namespace
SWITCHYARD_PLUGIN(describe)
