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

namespace {

// One build of the AVX2 units: its row kernels, the 4-row kernels it adds, its interleaved
// layouts, its grouped types.
DotKernel avx2_build(StorageType w, KernelTable kernels, KernelTable dot4, KernelTable x16, KernelTable grouped) {
  if (DotKernel k = find_kernel(kernels, w); k.dot) {
    if (!k.dot4) k.dot4 = find_kernel(dot4, w).dot4;
    return k;
  }
  if (const DotKernel k = find_kernel(x16, w); k.group1) return k;
  if (const DotKernel k = find_kernel(grouped, w); k.dot) return k;
  return dot_kernel_scalar(w);
}

}  // namespace

DotKernel dot_kernel_avx2(StorageType w) { return avx2_build(w, kAvx2Kernels, kAvx2Dot4, kAvx2X16, kAvx2Grouped); }

DotKernel dot_kernel_avx2vnni(StorageType w) { return avx2_build(w, kAvx2KernelsVnni, kAvx2Dot4Vnni, kAvx2X16Vnni, kAvx2GroupedVnni); }

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
