// What the ISA-specific translation units export: each is compiled with its instruction
// set's flags, so nothing in it may run before dispatch has checked the CPU, and it exports
// nothing but a constant table of its kernels. A table is constant-initialized data (no code
// of the unit runs to build it or to read it); the getters of dot.hpp that look kernels up
// (dot_tables.cpp) are compiled for plain x86-64, so asking which kernels exist is safe on
// any CPU. tests/integration/isa_objects.sh checks that the ISA objects export only tables.
#pragma once

#include <span>

#include "dot.hpp"

namespace sy::cpu {

/// The kernel of one weight type in one ISA unit.
struct KernelEntry {
  StorageType weight = StorageType::F32;
  DotKernel kernel;
};
using KernelTable = std::span<const KernelEntry>;

/// The kernel `table` has for `weight`, or an empty DotKernel.
DotKernel find_kernel(KernelTable table, StorageType weight);

#if defined(__x86_64__)
// One table per unit (the file named beside it), defined there with constinit.
extern const KernelTable kAvx2Kernels;            ///< dot_avx2.cpp
extern const KernelTable kAvx2Dot4;               ///< dot_avx2_dot4.cpp: 4-row kernels only (dot4 set)
extern const KernelTable kAvx2X16;                ///< dot_avx2_x16.cpp: Q4_K_X16, Q4_0_X16, Q8_0_X16
extern const KernelTable kAvx2Grouped;            ///< dot_grouped_avx2.cpp: I4_G*, I8_G*, FP8 blocks
// The same four units built again with AVX-VNNI (simd_avx2.hpp).
extern const KernelTable kAvx2KernelsVnni;
extern const KernelTable kAvx2Dot4Vnni;
extern const KernelTable kAvx2X16Vnni;
extern const KernelTable kAvx2GroupedVnni;
extern const KernelTable kAvx512Kernels;          ///< dot_avx512.cpp
extern const KernelTable kAvx512Extra;            ///< dot_avx512_extra.cpp
extern const KernelTable kAvx512Grouped;          ///< dot_grouped_avx512.cpp
extern const KernelTable kAvx512Bf16;             ///< dot_avx512_bf16.cpp (avx512bf16)
extern const KernelTable kAvx512Vnni;             ///< dot_avx512_vnni.cpp (avx512vnni): 32-element types
extern const KernelTable kAvx512VnniK;            ///< dot_avx512_vnni_k.cpp: K-quants, IQ4_XS
extern const KernelTable kAvx512VnniGrouped;      ///< dot_grouped_avx512_vnni.cpp
extern const KernelTable kAvx512VnniX16;          ///< dot_avx512_vnni_x16.cpp: Q4_K_X16, Q4_0_X16, Q8_0_X16
extern const KernelTable kAvx512VnniI4x16;        ///< dot_avx512_vnni_i4x16.cpp: I4_G*_X16
#endif

}  // namespace sy::cpu
