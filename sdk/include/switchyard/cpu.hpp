// CPU feature detection shared by the registry (choosing plugin variants) and the CPU
// backend (choosing kernels), so both honour the same SWITCHYARD_CPU_ISA override.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sy {

/// Features this process may use: what the CPU and OS support, narrowed by the
/// environment variable SWITCHYARD_CPU_ISA (scalar: none; avx2: nothing of AVX-512 and no
/// AVX-VNNI; avx2vnni: nothing of AVX-512; avx512: everything detected). Names: avx, avx2,
/// fma, f16c, avx512f, avx512bw, avx512vl, avx512dq, avx512vnni, avx512bf16, avxvnni.
std::vector<std::string> cpu_features();

/// True when `feature` (a name from cpu_features()) may be used.
bool cpu_has(std::string_view feature);

/// The forced instruction-set level from SWITCHYARD_CPU_ISA ("scalar", "avx2", "avx2vnni",
/// "avx512"), or an empty string when unset. An invalid value is reported once on stderr and ignored.
std::string cpu_isa_override();

}  // namespace sy
