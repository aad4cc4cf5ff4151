#include "util/read_bandwidth.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sy::util {
namespace {

// Four independent accumulators, so the sum's dependency chain does not limit the loads.
uint64_t sum_scalar(const uint64_t* p, size_t n) {
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) s0 += p[i], s1 += p[i + 1], s2 += p[i + 2], s3 += p[i + 3];
  return s0 + s1 + s2 + s3;
}

#if defined(__x86_64__)
// The build targets baseline x86-64, so AVX2 is chosen at run time, not at compile time.
__attribute__((target("avx2"))) uint64_t sum_avx2(const uint64_t* p, size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  const auto* v = reinterpret_cast<const __m256i*>(p);
  for (size_t i = 0; i + 16 <= n; i += 16, v += 4) {
    a = _mm256_add_epi64(a, _mm256_load_si256(v));
    b = _mm256_add_epi64(b, _mm256_load_si256(v + 1));
    c = _mm256_add_epi64(c, _mm256_load_si256(v + 2));
    d = _mm256_add_epi64(d, _mm256_load_si256(v + 3));
  }
  alignas(32) uint64_t out[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  return out[0] + out[1] + out[2] + out[3];
}
#endif

using SumFn = uint64_t (*)(const uint64_t*, size_t);

SumFn pick_sum() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return sum_avx2;
#endif
  return sum_scalar;
}

}  // namespace

double measure_read_bandwidth(size_t bytes, int threads, int passes) {
  threads = std::max(1, threads);
  constexpr size_t kAlign = 4096;
  const size_t words = std::max<size_t>(bytes / sizeof(uint64_t), 16 * static_cast<size_t>(threads));
  std::unique_ptr<uint64_t, void (*)(void*)> buf(
      static_cast<uint64_t*>(std::aligned_alloc(kAlign, (words * sizeof(uint64_t) + kAlign - 1) / kAlign * kAlign)),
      std::free);
  if (!buf) return 0.0;
  std::memset(buf.get(), 1, words * sizeof(uint64_t));
  const SumFn sum = pick_sum();
  // Each thread's part is a multiple of 16 words, so every vector load stays aligned.
  const size_t per = words / static_cast<size_t>(threads) / 16 * 16;
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  double best = 0;
  for (int rep = 0; rep < passes; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] { sums[static_cast<size_t>(t)] = sum(buf.get() + static_cast<size_t>(t) * per, per); });
    for (auto& t : ts) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The sums are kept (and checked) so the reads cannot be optimised away.
    uint64_t total = 0;
    for (auto v : sums) total += v;
    if (s > 0 && total != 0) best = std::max(best, static_cast<double>(per * static_cast<size_t>(threads) * sizeof(uint64_t)) / s);
  }
  return best;
}

}  // namespace sy::util
