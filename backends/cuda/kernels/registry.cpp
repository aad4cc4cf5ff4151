#include <array>

#include "kernels/kernel.hpp"

namespace sy::cuda {

std::span<const KernelDef* const> all_kernels() {
  static const auto table = [] {
    std::vector<const KernelDef*> v;
    for (auto group : {elementwise_kernels(), norm_kernels(), rope_kernels(), routing_kernels(), matmul_kernels(),
                       cache_kernels(), data_kernels(), recurrent_kernels()})
      for (const auto& d : group) v.push_back(&d);
    return v;
  }();
  return table;
}

}  // namespace sy::cuda
