#include "dot.hpp"

namespace sy::cpu {

DotKernel dot_kernel(StorageType weight, Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::avx512) return dot_kernel_avx512(weight);
  if (isa == Isa::avx2) return dot_kernel_avx2(weight);
#else
  (void)isa;
#endif
  return dot_kernel_scalar(weight);
}

}  // namespace sy::cpu
