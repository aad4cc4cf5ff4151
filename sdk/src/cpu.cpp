#include "switchyard/cpu.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define SY_X86 1
#endif

namespace sy {
namespace {

#if SY_X86
unsigned long long xgetbv0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}
#endif

std::vector<std::string> detect() {
  std::vector<std::string> f;
#if SY_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27);
  const unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;          // XMM and YMM state saved by the OS
  const bool os_avx512 = (xcr0 & 0xe6) == 0xe6;     // plus opmask and ZMM state
  if (os_avx && (c & (1u << 28))) f.emplace_back("avx");
  if (os_avx && (c & (1u << 12))) f.emplace_back("fma");
  if (os_avx && (c & (1u << 29))) f.emplace_back("f16c");
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  if (__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) {
    if (os_avx && (b7 & (1u << 5))) f.emplace_back("avx2");
    if (os_avx512 && (b7 & (1u << 16))) f.emplace_back("avx512f");
    if (os_avx512 && (b7 & (1u << 17))) f.emplace_back("avx512dq");
    if (os_avx512 && (b7 & (1u << 30))) f.emplace_back("avx512bw");
    if (os_avx512 && (b7 & (1u << 31))) f.emplace_back("avx512vl");
    if (os_avx512 && (c7 & (1u << 11))) f.emplace_back("avx512vnni");
    unsigned a71 = 0, b71 = 0, c71 = 0, d71 = 0;
    if (__get_cpuid_count(7, 1, &a71, &b71, &c71, &d71)) {
      if (os_avx && (a71 & (1u << 4))) f.emplace_back("avxvnni");
      if (os_avx512 && (a71 & (1u << 5))) f.emplace_back("avx512bf16");
    }
  }
#endif
  return f;
}

}  // namespace

std::string cpu_isa_override() {
  const char* env = std::getenv("SWITCHYARD_CPU_ISA");
  if (!env || !*env) return {};
  std::string v(env);
  if (v == "scalar" || v == "avx2" || v == "avx2vnni" || v == "avx512") return v;
  static bool warned = false;  // one warning per process is enough; benign race
  if (!warned) {
    warned = true;
    std::fprintf(stderr, "switchyard: ignoring SWITCHYARD_CPU_ISA='%s': use scalar, avx2, avx2vnni or avx512\n", env);
  }
  return {};
}

std::vector<std::string> cpu_features() {
  auto f = detect();
  const std::string isa = cpu_isa_override();
  if (isa == "scalar") return {};
  // avx2 is what llama.cpp built for AVX2 + FMA + F16C runs: no VNNI of either width.
  if (isa == "avx2" || isa == "avx2vnni")
    std::erase_if(f, [&](const std::string& s) { return s.rfind("avx512", 0) == 0 || (isa == "avx2" && s == "avxvnni"); });
  return f;
}

bool cpu_has(std::string_view feature) {
  const auto f = cpu_features();
  return std::find(f.begin(), f.end(), feature) != f.end();
}

}  // namespace sy
