#include "dot.hpp"

#include "switchyard/cpu.hpp"

namespace sy::cpu {

DotKernel dot_kernel(StorageType weight, Isa isa) {
  DotKernel k;
#if defined(__x86_64__)
  if (isa == Isa::avx512) {
    static const Avx512Ext ext{cpu_has("avx512vnni"), cpu_has("avx512bf16")};
    k = dot_kernel_avx512_best(weight, ext);
  } else if (isa == Isa::avx2vnni) {
    k = dot_kernel_avx2vnni(weight);
  } else if (isa == Isa::avx2) {
    k = dot_kernel_avx2(weight);
  } else {
    k = dot_kernel_scalar(weight);
  }
#else
  (void)isa;
  k = dot_kernel_scalar(weight);
#endif
  // An interleaved layout exists to be faster: its scalar reference is for tests only.
  if (k.group1 && k.isa == Isa::scalar) return DotKernel{};
  return k.usable() ? k : dot_kernel_generic(weight, isa);
}

size_t act_row_bytes(const DotKernel& kern, int64_t n) {
  return kern.act_bytes ? kern.act_bytes(n) : static_cast<size_t>(*storage_row_bytes(kern.act_type, static_cast<uint64_t>(n)));
}

}  // namespace sy::cpu
