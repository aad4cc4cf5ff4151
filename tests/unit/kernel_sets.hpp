// The CPU kernel sets the kernel tests run on, one Catch2 template type each
// (TEMPLATE_TEST_CASE(..., SY_DOT_SETS)): a set this CPU cannot run is a test case of its
// own, reported skipped with what the CPU lacks, instead of a loop that quietly leaves it out.
#pragma once

#include <string>

#include "dot.hpp"
#include "skip.hpp"
#include "switchyard/cpu.hpp"

namespace sy::test {

struct ScalarSet {
  static constexpr const char* name = "scalar";
  static constexpr cpu::Isa isa = cpu::Isa::scalar;
  static constexpr const char* feature = nullptr;  ///< an extension of isa the set needs too
  static cpu::DotKernel kernel(StorageType t) { return cpu::dot_kernel_scalar(t); }
};
struct Avx2Set {
  static constexpr const char* name = "avx2";
  static constexpr cpu::Isa isa = cpu::Isa::avx2;
  static constexpr const char* feature = nullptr;
  static cpu::DotKernel kernel(StorageType t) { return cpu::dot_kernel_avx2(t); }
};
struct Avx2VnniSet {
  static constexpr const char* name = "avx2vnni";
  static constexpr cpu::Isa isa = cpu::Isa::avx2vnni;
  static constexpr const char* feature = nullptr;
  static cpu::DotKernel kernel(StorageType t) { return cpu::dot_kernel_avx2vnni(t); }
};
struct Avx512Set {
  static constexpr const char* name = "avx512";
  static constexpr cpu::Isa isa = cpu::Isa::avx512;
  static constexpr const char* feature = nullptr;
  static cpu::DotKernel kernel(StorageType t) { return cpu::dot_kernel_avx512(t); }
};
struct Avx512VnniSet {
  static constexpr const char* name = "avx512vnni";
  static constexpr cpu::Isa isa = cpu::Isa::avx512;
  static constexpr const char* feature = "avx512vnni";
  static cpu::DotKernel kernel(StorageType t) { return cpu::dot_kernel_avx512_best(t, {true, false}); }
};
struct Avx512Bf16Set {
  static constexpr const char* name = "avx512bf16";
  static constexpr cpu::Isa isa = cpu::Isa::avx512;
  static constexpr const char* feature = "avx512bf16";
  static cpu::DotKernel kernel(StorageType t) { return cpu::dot_kernel_avx512_best(t, {false, true}); }
};

/// Why this process may not run Set's kernels, or an empty string when it may.
template <class Set>
std::string missing_set() {
  if (std::string why = missing_isa(Set::isa); !why.empty()) return why;
  if constexpr (Set::feature != nullptr)
    if (!cpu_has(Set::feature))
      return std::string("needs the CPU feature ") + Set::feature + ", which this CPU (or SWITCHYARD_CPU_ISA) does not allow";
  return {};
}

}  // namespace sy::test

/// Every dot-kernel set, extensions included.
#define SY_DOT_SETS sy::test::ScalarSet, sy::test::Avx2Set, sy::test::Avx2VnniSet, sy::test::Avx512Set, sy::test::Avx512VnniSet, sy::test::Avx512Bf16Set
/// The SIMD ones.
#define SY_SIMD_SETS sy::test::Avx2Set, sy::test::Avx2VnniSet, sy::test::Avx512Set, sy::test::Avx512VnniSet, sy::test::Avx512Bf16Set
/// The levels matmul and matmul_id take (their AVX-512 level uses the extensions the CPU has).
#define SY_ISA_SETS sy::test::ScalarSet, sy::test::Avx2Set, sy::test::Avx2VnniSet, sy::test::Avx512Set

/// Skips the rest of the test case unless this process may run Set's kernels.
#define SY_REQUIRE_SET(Set)                                                                  \
  do {                                                                                       \
    if (const std::string sy_missing_ = ::sy::test::missing_set<Set>(); !sy_missing_.empty()) \
      SY_SKIP_HARDWARE(sy_missing_);                                                         \
  } while (false)
