#include "dot.hpp"

#include "switchyard/cpu.hpp"

namespace sy::cpu {

DotKernel dot_kernel(StorageType weight, Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::avx512) {
    static const Avx512Ext ext{cpu_has("avx512vnni"), cpu_has("avx512bf16")};
    return dot_kernel_avx512_best(weight, ext);
  }
  if (isa == Isa::avx2) return dot_kernel_avx2(weight);
#else
  (void)isa;
#endif
  return dot_kernel_scalar(weight);
}

}  // namespace sy::cpu
