// The kernel table: every group's defs, in the order the executor asks them. Within an op,
// earlier defs win, so a group lists its fast paths before its portable ones.
#include <vector>

#include "kernel.hpp"

namespace sy::vulkan {

std::span<const KernelDef* const> all_kernels() {
  static const std::vector<const KernelDef*> table = [] {
    std::vector<const KernelDef*> t;
    for (auto group : {elementwise_kernels, norm_kernels, rope_kernels, matmul_kernels, routing_kernels, cache_kernels,
                       recurrent_kernels})
      for (const KernelDef& k : group()) t.push_back(&k);
    return t;
  }();
  return table;
}

}  // namespace sy::vulkan
