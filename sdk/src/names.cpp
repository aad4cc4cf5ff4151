// Spellings of the SDK's small enums, shared by manifests, messages and docs.
#include <array>

#include "switchyard/backend.hpp"
#include "switchyard/component.hpp"
#include "switchyard/ops.hpp"

namespace sy {

std::string_view component_kind_name(ComponentKind k) noexcept {
  switch (k) {
    case ComponentKind::format: return "format";
    case ComponentKind::backend: return "backend";
    case ComponentKind::sampler: return "sampler";
  }
  return "?";
}

std::string_view device_kind_name(DeviceKind k) noexcept {
  switch (k) {
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::discrete_gpu: return "discrete_gpu";
    case DeviceKind::integrated_gpu: return "integrated_gpu";
    case DeviceKind::other: return "other";
  }
  return "?";
}

namespace {
constexpr std::array<std::pair<OpKind, std::string_view>, 27> kOps{{
    {OpKind::get_rows, "get_rows"}, {OpKind::rms_norm, "rms_norm"}, {OpKind::matmul, "matmul"},
    {OpKind::matmul_id, "matmul_id"}, {OpKind::add, "add"}, {OpKind::mul, "mul"}, {OpKind::scale, "scale"},
    {OpKind::swiglu, "swiglu"}, {OpKind::silu, "silu"}, {OpKind::gelu, "gelu"}, {OpKind::sigmoid, "sigmoid"},
    {OpKind::softmax, "softmax"}, {OpKind::rope, "rope"}, {OpKind::top_k, "top_k"}, {OpKind::argsort, "argsort"},
    {OpKind::concat, "concat"}, {OpKind::copy, "copy"}, {OpKind::conv1d, "conv1d"},
    {OpKind::delta_net, "delta_net"}, {OpKind::attention, "attention"},
    {OpKind::l2_norm, "l2_norm"}, {OpKind::softplus, "softplus"}, {OpKind::set_rows, "set_rows"},
    {OpKind::expert_weights, "expert_weights"}, {OpKind::moe_combine, "moe_combine"},
    {OpKind::gather_cols, "gather_cols"}, {OpKind::fp8_qdq, "fp8_qdq"},
}};
constexpr auto kOpList = [] {
  std::array<OpKind, kOps.size()> a{};
  for (size_t i = 0; i < kOps.size(); ++i) a[i] = kOps[i].first;
  return a;
}();
}  // namespace

std::span<const OpKind> all_ops() noexcept { return kOpList; }

std::string_view op_name(OpKind op) noexcept {
  for (const auto& [k, n] : kOps)
    if (k == op) return n;
  return "?";
}

}  // namespace sy
