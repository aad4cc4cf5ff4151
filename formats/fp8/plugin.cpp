// The fp8 plugin: FP8 E4M3 checkpoints (transformers fp8 and compressed-tensors, Hugging Face
// folders), decoded at load into FP8_E4M3_B128. Activations stay unquantized (weight-only).
#include "fp8_scheme.hpp"
#include "quant_format.hpp"

namespace sy::fp8 {
namespace {

Result<std::unique_ptr<Component>> make(const ParamMap&) noexcept {
  return guard_factory([]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<hfq::QuantFormat>(hf::QuantReader{"fp8", make_scheme});
  });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = hfq::quant_plugin(
      "fp8", "FP8 E4M3 checkpoints (transformers fp8, compressed-tensors; per tensor, channel or 128x128 block), as FP8_E4M3_B128",
      make);
  return &d;
}

}  // namespace
}  // namespace sy::fp8

SWITCHYARD_PLUGIN(sy::fp8::describe)
