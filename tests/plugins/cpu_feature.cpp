// A component that needs AVX-512: unavailable under SWITCHYARD_CPU_ISA=avx2.
#include "common.hpp"

namespace {
const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "test-isa";
    pd.version = "1.0.0";
    auto c = sy::testplugins::fixed_sampler("test_avx512");
    c.cpu_features = {"avx512f"};
    c.rank = 90;
    pd.components.push_back(c);
    auto plain = sy::testplugins::fixed_sampler("test_portable");
    plain.rank = 10;
    pd.components.push_back(plain);
    return pd;
  }();
  return &d;
}
}  // namespace
SWITCHYARD_PLUGIN(describe)
