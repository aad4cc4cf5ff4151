// How a Catch2 test case that cannot run here says so. ctest marks a "unit: ..." entry
// skipped when its output has a line starting "SKIPPED: " (SKIP_REGULAR_EXPRESSION in
// tests/CMakeLists.txt) whatever the exit code, so a skip comes before any check of its test
// case, and the case returns right after it: SY_SKIP_* do both.
//
// Two kinds of reason:
// - hardware this machine lacks (an instruction set, a CUDA GPU): a skip everywhere;
// - anything else (no Vulkan device, no built backend CI builds): a skip on a developer's
//   machine, a failure under CI=true, where lavapipe and the backends must be there.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include "isa.hpp"
#include "switchyard/cpu.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace sy::test {

inline bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

/// Says that the test case is skipped for hardware this machine lacks. The caller returns.
inline void skip_for_hardware(const std::string& why) { std::cout << "SKIPPED: " << why << std::endl; }

/// Says that the test case is skipped, or fails it under CI=true (where it must run). The
/// caller returns.
inline void skip_unless_ci(const std::string& why) {
  if (under_ci()) FAIL(why << " (CI=true requires it)");
  std::cout << "SKIPPED: " << why << std::endl;
}

/// Whether the CPU has AVX-VNNI (CPUID leaf 7 subleaf 1, EAX bit 4; the YMM state is the
/// OS's when it has AVX2 at all). Read here because neither compiler's builtin knows it
/// reliably (clang 14 rejects the name, GCC 12's runtime does not detect it).
inline bool hardware_avxvnni() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) != 0;
#else
  return false;
#endif
}

/// The best kernel ISA the CPU itself supports, read by the compiler's own CPU model (its
/// runtime reads CPUID and XCR0), independent of the runtime's detection and of
/// SWITCHYARD_CPU_ISA. F16C, which the AVX2 kernels need too, is left out: clang's builtin
/// does not know it, and every CPU with AVX2 has it.
inline cpu::Isa hardware_isa() {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return cpu::Isa::avx512;
  return avx2 ? cpu::Isa::avx2 : cpu::Isa::scalar;
}

/// Why this process may not run `isa`'s kernels, or an empty string when it may.
inline std::string missing_isa(cpu::Isa isa) {
  // AVX-512 CPUs need not have AVX-VNNI (Zen 4 and Ice Lake do not): it is asked for by name.
  if (isa == cpu::Isa::avx2vnni) {
    if (static_cast<int>(cpu::detect_isa()) >= static_cast<int>(cpu::Isa::avx2) && cpu_has("avxvnni")) return {};
  } else if (static_cast<int>(cpu::detect_isa()) >= static_cast<int>(isa)) {
    return {};
  }
  switch (isa) {
    case cpu::Isa::avx512: return "needs AVX-512 (F, BW, VL), which this CPU (or SWITCHYARD_CPU_ISA) does not allow";
    case cpu::Isa::avx2vnni: return "needs AVX-VNNI, which this CPU (or SWITCHYARD_CPU_ISA) does not allow";
    default: return "needs AVX2 with FMA and F16C, which this CPU (or SWITCHYARD_CPU_ISA) does not allow";
  }
}

}  // namespace sy::test

/// Ends the test case as skipped: the machine lacks hardware the case needs.
#define SY_SKIP_HARDWARE(why)           \
  do {                                  \
    ::sy::test::skip_for_hardware(why); \
    return;                             \
  } while (false)

/// Ends the test case as skipped, or as failed under CI=true, where it must run.
#define SY_SKIP_UNLESS_CI(why)       \
  do {                               \
    ::sy::test::skip_unless_ci(why); \
    return;                          \
  } while (false)
