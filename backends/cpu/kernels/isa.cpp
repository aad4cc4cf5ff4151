#include "isa.hpp"

#include "switchyard/cpu.hpp"

namespace sy::cpu {

Isa detect_isa() {
  // The AVX-512 kernels use F, BW and VL; the AVX2 kernels also need FMA and F16C.
  if (cpu_has("avx512f") && cpu_has("avx512bw") && cpu_has("avx512vl") && cpu_has("fma") && cpu_has("f16c"))
    return Isa::avx512;
  if (cpu_has("avx2") && cpu_has("fma") && cpu_has("f16c")) return cpu_has("avxvnni") ? Isa::avx2vnni : Isa::avx2;
  return Isa::scalar;
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx2vnni: return "avx2vnni";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

}  // namespace sy::cpu
