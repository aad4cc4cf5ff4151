// The per-ISA kernel getters, over the ISA units' tables (dot_tables.hpp). Built without
// any ISA flags: a test may ask for the AVX-512 kernels on a CPU without AVX-512 and get
// an answer instead of SIGILL; only calling a kernel it returns needs the ISA.
#include "dot_tables.hpp"

#include <algorithm>

namespace sy::cpu {

DotKernel find_kernel(KernelTable table, StorageType weight) {
  const auto it = std::find_if(table.begin(), table.end(), [&](const KernelEntry& e) { return e.weight == weight; });
  return it == table.end() ? DotKernel{} : it->kernel;
}

#if defined(__x86_64__)

DotKernel dot_kernel_avx2(StorageType w) {
  if (DotKernel k = find_kernel(kAvx2Kernels, w); k.dot) {
    if (!k.dot4) k.dot4 = find_kernel(kAvx2Dot4, w).dot4;
    return k;
  }
  if (const DotKernel k = find_kernel(kAvx2Grouped, w); k.dot) return k;
  return dot_kernel_scalar(w);
}

DotKernel dot_kernel_avx512(StorageType w) {
  for (const KernelTable& t : {kAvx512Kernels, kAvx512Extra, kAvx512Grouped})
    if (const DotKernel k = find_kernel(t, w); k.dot) return k;
  return dot_kernel_avx2(w);
}

DotKernel dot_kernel_avx512_best(StorageType w, Avx512Ext ext) {
  if (ext.vnni) {
    for (const KernelTable& t : {kAvx512Vnni, kAvx512VnniK, kAvx512VnniGrouped})
      if (const DotKernel k = find_kernel(t, w); k.dot) return k;
    for (const KernelTable& t : {kAvx512VnniX16, kAvx512VnniI4x16})
      if (const DotKernel k = find_kernel(t, w); k.group1) return k;
  }
  if (ext.bf16)
    if (const DotKernel k = find_kernel(kAvx512Bf16, w); k.dot) return k;
  return dot_kernel_avx512(w);
}

#endif

}  // namespace sy::cpu
