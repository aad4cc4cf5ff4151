// Which instruction set the CPU kernels use: chosen once from the CPU's features, which
// SWITCHYARD_CPU_ISA (scalar | avx2 | avx2vnni | avx512) can narrow so every path is testable.
// avx2vnni is AVX2 with AVX-VNNI (Alder Lake, Zen 5); avx512 need not have AVX-VNNI, and a
// CPU with both takes avx512.
#pragma once

#include <string_view>

namespace sy::cpu {

enum class Isa { scalar, avx2, avx2vnni, avx512 };

/// The best ISA this process may use.
Isa detect_isa();
/// "scalar", "avx2", "avx2vnni", "avx512".
std::string_view isa_name(Isa isa);

}  // namespace sy::cpu
