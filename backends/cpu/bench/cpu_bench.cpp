// CPU kernel benchmarks (Google Benchmark; not run in CI):
//   memory_bandwidth/threads:N   reading a 1 GiB buffer, the ceiling for memory-bound GEMV
//   gemv/<TYPE>/threads:N        one activation row against a weight matrix far larger than
//                                any cache; bytes_per_second counts weight bytes only
// Run: build/bin/switchyard-bench-cpu [--benchmark_filter=...]; SWITCHYARD_CPU_ISA picks
// the kernel path. Compare gemv GB/s with memory_bandwidth GB/s of the same run.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "matmul.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::cpu;

namespace {

int all_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

__attribute__((target("avx2"))) uint64_t sum_avx2(const uint8_t* p, size_t n) {
  __m256i acc = _mm256_setzero_si256();
  for (size_t i = 0; i + 128 <= n; i += 128) {
    acc = _mm256_xor_si256(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    acc = _mm256_xor_si256(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    acc = _mm256_xor_si256(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    acc = _mm256_xor_si256(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  return static_cast<uint64_t>(_mm256_extract_epi64(acc, 0));
}

void memory_bandwidth(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const size_t bytes = size_t{1} << 30;
  auto* buf = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
  for (size_t i = 0; i < bytes; i += 4096) buf[i] = static_cast<uint8_t>(i);  // fault the pages in
  ThreadPool pool(threads);
  // Contiguous ranges, two per thread: the access pattern the GEMV uses and the one the
  // hardware prefetchers follow best, so the probe measures what memory can really give.
  const int64_t chunks = 2 * threads;
  std::vector<uint64_t> sink(static_cast<size_t>(threads) * 8);
  for (auto _ : state)
    pool.run(chunks, [&](int64_t c, int t) { sink[static_cast<size_t>(t) * 8] += sum_avx2(buf + c * (bytes / chunks), bytes / chunks); });
  benchmark::DoNotOptimize(sink.data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  std::free(buf);
}

void gemv(benchmark::State& state, StorageType type) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t k = 4096;
  const size_t row_bytes = *storage_row_bytes(type, k);
  const int64_t rows = static_cast<int64_t>((size_t{512} << 20) / row_bytes);  // ~512 MiB of weights
  std::vector<uint8_t> w(row_bytes * static_cast<size_t>(rows));
  {
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<float> row(k);
    std::vector<uint8_t> q(row_bytes);
    for (auto& v : row) v = nd(rng);
    (void)quantize_row(type, row.data(), q.data(), k);
    for (int64_t r = 0; r < rows; ++r) std::memcpy(w.data() + static_cast<size_t>(r) * row_bytes, q.data(), row_bytes);
  }
  std::vector<float> x(k, 0.5f), y(static_cast<size_t>(rows));
  const Isa isa = detect_isa();
  std::vector<uint8_t> scratch(matmul_scratch_bytes(type, k, 1, isa));
  ThreadPool pool(threads);
  MatmulArgs a{w.data(), type, k, rows, x.data(), 1, y.data()};
  for (auto _ : state) {
    if (!matmul(a, isa, pool, scratch.data()).is_ok()) state.SkipWithError("matmul failed");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.size()));
  state.SetLabel(std::string(isa_name(isa)));
}

// Prefill: m activation rows against a 4096 x 4096 matrix; reports GFLOP/s (2 per MAC).
void gemm(benchmark::State& state, StorageType type) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t k = 4096, rows = 4096, m = state.range(1);
  const size_t row_bytes = *storage_row_bytes(type, k);
  std::vector<uint8_t> w(row_bytes * static_cast<size_t>(rows));
  std::mt19937 rng(2);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> row(k);
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = nd(rng);
    (void)quantize_row(type, row.data(), w.data() + static_cast<size_t>(r) * row_bytes, k);
  }
  std::vector<float> x(static_cast<size_t>(k * m)), y(static_cast<size_t>(rows * m));
  for (auto& v : x) v = nd(rng);
  const Isa isa = detect_isa();
  std::vector<uint8_t> scratch(matmul_scratch_bytes(type, k, m, isa));
  ThreadPool pool(threads);
  MatmulArgs a{w.data(), type, k, rows, x.data(), m, y.data()};
  for (auto _ : state) {
    if (!matmul(a, isa, pool, scratch.data()).is_ok()) state.SkipWithError("matmul failed");
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(k * rows * m) * static_cast<double>(state.iterations()) / 1e9,
                                                  benchmark::Counter::kIsRate);
}

void register_all() {
  const int t = all_threads();
  benchmark::RegisterBenchmark("memory_bandwidth", memory_bandwidth)->Arg(1)->Arg(t)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
  for (auto type : {StorageType::Q4_K, StorageType::Q6_K, StorageType::Q8_0, StorageType::Q4_0, StorageType::Q5_K,
                    StorageType::IQ4_XS, StorageType::F16, StorageType::F32})
    benchmark::RegisterBenchmark(("gemv/" + std::string(storage_type_name(type))).c_str(),
                                 [type](benchmark::State& s) { gemv(s, type); })
        ->Arg(1)->Arg(t)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
  for (auto type : {StorageType::Q4_K, StorageType::Q8_0, StorageType::Q6_K})
    benchmark::RegisterBenchmark(("gemm/" + std::string(storage_type_name(type))).c_str(),
                                 [type](benchmark::State& s) { gemm(s, type); })
        ->Args({t, 64})->Args({t, 256})->ArgNames({"threads", "m"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
