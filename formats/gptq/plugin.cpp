// The gptq plugin: GPTQ v1 / v2 checkpoints (Hugging Face folders), decoded at load into
// I4_G* (2, 3 and 4 bits) or I8_G* (8 bits).
#include "gptq_scheme.hpp"
#include "quant_format.hpp"

namespace sy::gptq {
namespace {

Result<std::unique_ptr<Component>> make(const ParamMap&) noexcept {
  return guard_factory([]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<hfq::QuantFormat>(hf::QuantReader{"gptq", make_scheme});
  });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = hfq::quant_plugin(
      "gptq", "GPTQ v1/v2 checkpoints, 2/3/4/8 bits, act-order included (Hugging Face folders), as I4_G*/I8_G*", make);
  return &d;
}

}  // namespace
}  // namespace sy::gptq

SWITCHYARD_PLUGIN(sy::gptq::describe)
