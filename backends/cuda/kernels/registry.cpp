#include <array>

#include "kernels/kernel.hpp"

namespace sy::cuda {

std::span<const KernelDef* const> all_kernels() {
  static const auto table = [] {
    std::vector<const KernelDef*> v;
    for (auto group : {elementwise_kernels(), norm_kernels(), rope_kernels(), routing_kernels()})
      for (const auto& d : group) v.push_back(&d);
    return v;
  }();
  return table;
}

// Matmul, matmul_id and get_rows arrive with the quantized kernels (issue 20): until then
// every weight stays where the CPU computes it.
std::vector<std::string> native_weight_types() { return {}; }

}  // namespace sy::cuda
