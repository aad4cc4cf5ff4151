#include "model/static_scales.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace sy::model {
namespace {

constexpr std::string_view kWeight = ".weight", kScale = ".input_scale";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_fp8(StorageType t) { return t == StorageType::FP8_E4M3_B128 || t == StorageType::FP8_E5M2_B128; }

// Canonical linears (the part after "blk.N.") that read one activation.
constexpr std::array<std::array<std::string_view, 3>, 4> kGroups{{
    {"attn_q", "attn_k", "attn_v"},
    {"ffn_gate", "ffn_up", ""},
    {"ffn_gate_exps", "ffn_up_exps", ""},
    {"ffn_gate_shexp", "ffn_up_shexp", ""},
}};

}  // namespace

Status check_static_scales(std::span<const TensorDesc> tensors) {
  const auto has = [&](const std::string& name) {
    return std::any_of(tensors.begin(), tensors.end(), [&](const TensorDesc& d) { return d.name == name; });
  };
  const bool any = std::any_of(tensors.begin(), tensors.end(), [](const TensorDesc& d) { return ends_with(d.name, kScale); });
  if (!any)
    return error::invalid_argument(
        "format.fp8_activations is static, but the checkpoint has no static activation scales (no <linear>.input_scale "
        "tensor): only FP8 checkpoints quantized with activation_scheme \"static\" (compressed-tensors: "
        "input_activations.dynamic false), read by the fp8 format plugin, carry them; set format.fp8_activations to "
        "weight_only (the default) for this model");
  for (const TensorDesc& d : tensors) {
    if (!is_fp8(d.type) || !ends_with(d.name, kWeight)) continue;
    const std::string scale = d.name.substr(0, d.name.size() - kWeight.size()) + std::string(kScale);
    if (!has(scale))
      return error::invalid_argument("format.fp8_activations is static, but the FP8 linear " + d.name +
                                     " has no static activation scale (" + scale + ") while others have one; the "
                                     "checkpoint is incomplete (download it again), or set format.fp8_activations to "
                                     "weight_only");
  }
  return Status::ok();
}

std::vector<std::string> same_input_weights(const std::string& weight) {
  const auto dot = weight.find('.', 4);  // "blk.N." ends at the second dot
  if (weight.rfind("blk.", 0) != 0 || dot == std::string::npos || !ends_with(weight, kWeight)) return {weight};
  const std::string layer = weight.substr(0, dot + 1);
  const std::string_view linear = std::string_view(weight).substr(dot + 1, weight.size() - dot - 1 - kWeight.size());
  for (const auto& g : kGroups) {
    if (std::find(g.begin(), g.end(), linear) == g.end()) continue;
    std::vector<std::string> out;
    for (std::string_view n : g)
      if (!n.empty()) out.push_back(layer + std::string(n) + std::string(kWeight));
    return out;
  }
  return {weight};
}

}  // namespace sy::model
