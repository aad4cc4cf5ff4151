// The awq plugin: AutoAWQ GEMM checkpoints (Hugging Face folders), decoded at load into I4_G*.
#include "awq_scheme.hpp"
#include "quant_format.hpp"

namespace sy::awq {
namespace {

Result<std::unique_ptr<Component>> make(const ParamMap&) noexcept {
  return guard_factory([]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<hfq::QuantFormat>(hf::QuantReader{"awq", make_scheme});
  });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d =
      hfq::quant_plugin("awq", "AutoAWQ 4-bit GEMM checkpoints (Hugging Face folders), as I4_G32/64/128", make);
  return &d;
}

}  // namespace
}  // namespace sy::awq

SWITCHYARD_PLUGIN(sy::awq::describe)
