// The unit tests' main. SY_TEST_NEEDS_ISA=avx2|avx2vnni|avx512 marks a run whose point is a forced
// instruction set (the "kernels: SWITCHYARD_CPU_ISA=..." entries): on a CPU that lacks it the
// run would only repeat a lower one, so it is skipped instead (exit 77), naming the ISA.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include "skip.hpp"

int main(int argc, char** argv) {
  if (const char* need = std::getenv("SY_TEST_NEEDS_ISA"); need && *need) {
    const std::string isa = need;
    if (isa != "avx2" && isa != "avx2vnni" && isa != "avx512") {
      std::cerr << "SY_TEST_NEEDS_ISA='" << isa << "': use avx2, avx2vnni or avx512\n";
      return 2;
    }
    // The hardware, not SWITCHYARD_CPU_ISA, which the entry sets to this same ISA.
    const int hw = static_cast<int>(sy::test::hardware_isa());
    const bool has = isa == "avx512" ? hw >= static_cast<int>(sy::cpu::Isa::avx512)
                                     : hw >= static_cast<int>(sy::cpu::Isa::avx2) && (isa == "avx2" || sy::test::hardware_avxvnni());
    if (!has) {
      std::cout << "SKIPPED: this run forces " << isa << ", which this CPU does not have\n";
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
