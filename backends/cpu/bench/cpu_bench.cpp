// CPU kernel benchmarks (Google Benchmark; not run in CI):
//   memory_bandwidth/threads:N   reading a 1 GiB buffer, the ceiling for memory-bound GEMV
//   gemv/<TYPE>/threads:N        one activation row against a weight matrix far larger than
//                                any cache; bytes_per_second counts weight bytes only
//   gemv_shape/<TYPE>/rows:R     decode at a model's shape (4096 x R weights, from memory):
//                                compare types' times at equal shapes
//   moe_layer/tokens:N           one MoE FFN (gate, up, SwiGLU, down over 256 experts, 8 used, the
//                                35B-A3B's shapes) through the Executor, as the runtime runs it;
//                                N = 1 is a decode step, 512 a prefill ubatch
//   dot_cached/<TYPE>            one thread, weights that fit in L2: the kernel's compute
//                                ceiling in weight bytes per CPU second (what a GEMV could
//                                stream at most), immune to other processes' memory traffic
//   gemm/<TYPE>/threads:N/m:M    prefill: M activation rows; GFLOP/s and weight bytes/s
// Run: build/bin/switchyard-bench-cpu [--benchmark_filter=...]; SWITCHYARD_CPU_ISA picks
// the kernel path. Compare gemv GB/s with memory_bandwidth GB/s of the same run.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "executor.hpp"
#include "matmul.hpp"
#include "switchyard/cpu.hpp"
#include "switchyard/graph.hpp"
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

// Baseline x86-64 (SSE2), for CPUs without AVX2.
uint64_t sum_sse2(const uint8_t* p, size_t n) {
  __m128i acc = _mm_setzero_si128();
  for (size_t i = 0; i + 64 <= n; i += 64)
    for (size_t j = 0; j < 64; j += 16) acc = _mm_xor_si128(acc, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + j)));
  return static_cast<uint64_t>(_mm_cvtsi128_si64(acc));
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
  const auto sum = cpu_has("avx2") ? sum_avx2 : sum_sse2;
  for (auto _ : state)
    pool.run(chunks, [&](int64_t c, int t) { sink[static_cast<size_t>(t) * 8] += sum(buf + c * (bytes / chunks), bytes / chunks); });
  benchmark::DoNotOptimize(sink.data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  std::free(buf);
}

// One weight row of `type` from the floats in `row`: the type's quantizer where it has one;
// the grouped and FP8 block types (no quantizer: format plugins repack checkpoints into
// them) get random codes under sane scales (f16 d = 0.01 and z = 8 or 128; f32 s = 0.01),
// and no E4M3 NaN code, which would take the kernels' slow path.
void bench_row(StorageType type, const std::vector<float>& row, uint8_t* dst, std::mt19937& rng) {
  const int64_t k = static_cast<int64_t>(row.size());
  if (quantize_row(type, row.data(), dst, k).is_ok()) return;
  const auto& info = storage_type_info(type);
  const size_t bb = info.block_bytes, bytes = *storage_row_bytes(type, static_cast<uint64_t>(k));
  const bool fp8 = type == StorageType::FP8_E4M3_B128 || type == StorageType::FP8_E5M2_B128;
  const bool i8 = type == StorageType::I8_G32 || type == StorageType::I8_G64 || type == StorageType::I8_G128;
  for (size_t off = 0; off < bytes; off += bb) {
    for (size_t j = 0; j < bb; ++j) dst[off + j] = static_cast<uint8_t>(rng());
    if (fp8) {
      const float s = 0.01f;
      std::memcpy(dst + off, &s, 4);
      for (size_t j = 4; j < bb; ++j)
        if ((dst[off + j] & 0x7c) == 0x7c) dst[off + j] ^= 0x40;  // finite in both FP8 encodings
    } else {
      const uint16_t d = fp32_to_fp16(0.01f), z = fp32_to_fp16(i8 ? 128.0f : 8.0f);
      std::memcpy(dst + off, &d, 2);
      std::memcpy(dst + off + 2, &z, 2);
    }
  }
}

void gemv(benchmark::State& state, StorageType type) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t k = 4096;
  const size_t row_bytes = *storage_row_bytes(type, k);
  const int64_t rows = static_cast<int64_t>((size_t{512} << 20) / row_bytes) / 16 * 16;  // ~512 MiB of weights
  std::vector<uint8_t> w(row_bytes * static_cast<size_t>(rows));
  {
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<float> row(k);
    std::vector<uint8_t> q(row_bytes);
    for (auto& v : row) v = nd(rng);
    bench_row(interleave_base(type), row, q.data(), rng);
    for (int64_t r = 0; r < rows; ++r) std::memcpy(w.data() + static_cast<size_t>(r) * row_bytes, q.data(), row_bytes);
    if (interleave_rows(type) > 1) {  // an interleaved layout (an _X16 type), as the loader repacks it
      std::vector<uint8_t> rowmajor = w;
      (void)repack_rows(type, rowmajor.data(), w.data(), k, rows);
    }
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

// Decode at a model's shape: one activation row against a k = 4096 matrix of `rows` rows
// (4096: an 8B model's attention projections; 12288: its FFN), so types compare at equal
// shapes whatever they cost per element (gemv/ above compares bandwidths at equal bytes).
// As in a decode step, the weights come from memory (memory:1): each iteration takes the
// next of enough copies of the matrix (384 MiB in all) that none is still in cache. With
// memory:0 the one matrix stays in cache where it fits: the kernels' compute ceiling.
// The weights are built once per (type, shape) and kept for the benchmark's repetitions:
// 64 random rows repeated (the kernels' speed does not depend on the values), then copied.
struct ShapeWeights {
  StorageType type = StorageType::F32;
  int64_t rows = 0;
  size_t copies = 0;
  std::vector<uint8_t> w;
};

const ShapeWeights& shape_weights(StorageType type, int64_t k, int64_t rows, size_t copies) {
  static ShapeWeights cached;
  if (cached.type == type && cached.rows == rows && cached.copies == copies) return cached;
  cached = ShapeWeights{type, rows, copies, {}};
  const size_t row_bytes = *storage_row_bytes(type, static_cast<uint64_t>(k)), bytes = row_bytes * static_cast<size_t>(rows);
  constexpr int64_t kDistinct = 64;
  std::vector<uint8_t> distinct(row_bytes * kDistinct);
  std::mt19937 rng(4);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t r = 0; r < kDistinct; ++r) {
    for (auto& v : row) v = nd(rng);
    bench_row(interleave_base(type), row, distinct.data() + static_cast<size_t>(r) * row_bytes, rng);
  }
  cached.w.resize(bytes * copies);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(cached.w.data() + static_cast<size_t>(r) * row_bytes, distinct.data() + static_cast<size_t>(r % kDistinct) * row_bytes, row_bytes);
  if (interleave_rows(type) > 1) {
    std::vector<uint8_t> rowmajor(cached.w.begin(), cached.w.begin() + static_cast<ptrdiff_t>(bytes));
    (void)repack_rows(type, rowmajor.data(), cached.w.data(), k, rows);
  }
  for (size_t c = 1; c < copies; ++c) std::memcpy(cached.w.data() + c * bytes, cached.w.data(), bytes);
  return cached;
}

void gemv_shape(benchmark::State& state, StorageType type) {
  const int64_t k = 4096, rows = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const size_t bytes = *storage_row_bytes(type, k) * static_cast<size_t>(rows);
  const size_t copies = state.range(2) ? std::max<size_t>(2, (size_t{384} << 20) / bytes) : 1;
  const std::vector<uint8_t>& w = shape_weights(type, k, rows, copies).w;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> x(k), y(static_cast<size_t>(rows));
  for (auto& v : x) v = nd(rng);
  const Isa isa = detect_isa();
  std::vector<uint8_t> scratch(matmul_scratch_bytes(type, k, 1, isa));
  ThreadPool pool(threads);
  size_t next = 0;
  for (auto _ : state) {
    MatmulArgs a{w.data() + next * bytes, type, k, rows, x.data(), 1, y.data()};
    next = (next + 1) % copies;
    if (!matmul(a, isa, pool, scratch.data()).is_ok()) state.SkipWithError("matmul failed");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  state.SetLabel(std::string(isa_name(isa)));
}

// The kernel alone on cached data: 256 KiB of weight rows against one activation row.
// Measured in CPU time, so a busy machine slows the run but not the figure much.
void dot_cached(benchmark::State& state, StorageType type) {
  const int64_t k = 4096;
  const Isa isa = detect_isa();
  const DotKernel kern = dot_kernel(type, isa);
  const size_t row_bytes = *storage_row_bytes(type, k);
  const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>((size_t{256} << 10) / row_bytes));
  std::vector<uint8_t> w(row_bytes * static_cast<size_t>(rows));
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> row(k);
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = nd(rng);
    bench_row(type, row, w.data() + static_cast<size_t>(r) * row_bytes, rng);
  }
  for (auto& v : row) v = nd(rng);
  std::vector<uint8_t> act(act_row_bytes(kern, k));
  kern.quantize_act(k, row.data(), act.data());
  float sink = 0;
  for (auto _ : state) {
    for (int64_t r = 0; r < rows; ++r) sink += row_dot(kern, k, w.data() + static_cast<size_t>(r) * row_bytes, act.data());
    benchmark::DoNotOptimize(sink);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.size()));
  state.SetLabel(std::string(isa_name(isa)));
}

// Prefill: m activation rows against a 4096 x 4096 matrix; reports GFLOP/s (2 per MAC)
// and weight bytes per second (each pass reads the matrix once).
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
    bench_row(interleave_base(type), row, w.data() + static_cast<size_t>(r) * row_bytes, rng);
  }
  if (interleave_rows(type) > 1) {
    std::vector<uint8_t> rowmajor = w;
    (void)repack_rows(type, rowmajor.data(), w.data(), k, rows);
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
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.size()));
  state.SetLabel(std::string(isa_name(isa)));
}

GraphTensor dense_tensor(StorageType type, void* data, int64_t ne0, int64_t ne1, int64_t ne2 = 1) {
  GraphTensor t;
  t.type = type;
  t.data = data;
  t.ne[0] = ne0, t.ne[1] = ne1, t.ne[2] = ne2;
  t.nb[0] = static_cast<int64_t>(storage_type_info(type).block_bytes);
  t.nb[1] = static_cast<int64_t>(*storage_row_bytes(type, static_cast<uint64_t>(ne0)));
  t.nb[2] = t.nb[1] * ne1;
  t.nb[3] = t.nb[2] * ne2;
  return t;
}

// Expert weights: 61 random rows repeated (quantizing 256 experts' worth takes minutes, and
// the kernels' speed does not depend on the values); every expert still has its own memory.
std::vector<uint8_t> expert_weights(StorageType type, int64_t k, int64_t rows, int64_t experts, uint32_t seed) {
  const size_t row_bytes = *storage_row_bytes(type, static_cast<uint64_t>(k));
  constexpr int64_t kDistinct = 61;
  std::vector<uint8_t> w(row_bytes * static_cast<size_t>(rows * experts));
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows * experts; ++r) {
    uint8_t* dst = w.data() + static_cast<size_t>(r) * row_bytes;
    if (r >= kDistinct) {
      std::memcpy(dst, w.data() + static_cast<size_t>(r % kDistinct) * row_bytes, row_bytes);
      continue;
    }
    for (auto& v : row) v = nd(rng);
    (void)quantize_row(type, row.data(), dst, k);
  }
  return w;
}

// One MoE FFN as the model builds it (runtime/model/layers.cpp moe()): gate and up over the
// shared input, SwiGLU, down over one row per chosen expert. Decode steps rotate through the
// experts, as real routing does, so their weights come from memory, not from the last
// iteration's cache; prefill uses one fixed routing with 8 distinct experts per token.
void moe_layer(benchmark::State& state) {
  const int64_t embd = 2048, ff = 512, experts = 256, used = 8, n = state.range(0);
  const auto wg = expert_weights(StorageType::Q4_K, embd, ff, experts, 11);
  const auto wu = expert_weights(StorageType::Q4_K, embd, ff, experts, 12);
  const auto wd = expert_weights(StorageType::Q6_K, ff, embd, experts, 13);
  std::vector<float> x(static_cast<size_t>(embd * n)), gate(static_cast<size_t>(ff * used * n)), up(gate.size()),
      h(gate.size()), y(static_cast<size_t>(embd * used * n));
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& v : x) v = nd(rng);
  std::vector<int32_t> ids(static_cast<size_t>(used * n));
  std::vector<int32_t> all(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) all[static_cast<size_t>(e)] = static_cast<int32_t>(e);
  for (int64_t t = 0; t < n; ++t) {
    std::shuffle(all.begin(), all.end(), rng);
    std::copy(all.begin(), all.begin() + used, ids.begin() + t * used);
  }
  const GraphTensor tensors[] = {
      dense_tensor(StorageType::Q4_K, const_cast<uint8_t*>(wg.data()), embd, ff, experts),
      dense_tensor(StorageType::Q4_K, const_cast<uint8_t*>(wu.data()), embd, ff, experts),
      dense_tensor(StorageType::Q6_K, const_cast<uint8_t*>(wd.data()), ff, embd, experts),
      dense_tensor(StorageType::F32, x.data(), embd, 1, n),
      dense_tensor(StorageType::I32, ids.data(), used, n),
      dense_tensor(StorageType::F32, gate.data(), ff, used, n),
      dense_tensor(StorageType::F32, up.data(), ff, used, n),
      dense_tensor(StorageType::F32, h.data(), ff, used, n),
      dense_tensor(StorageType::F32, y.data(), embd, used, n)};
  GraphNode nodes[4];
  nodes[0].op = nodes[1].op = nodes[3].op = OpKind::matmul_id;
  nodes[0].src[0] = 0, nodes[0].src[1] = 3, nodes[0].src[2] = 4, nodes[0].dst = 5;
  nodes[1].src[0] = 1, nodes[1].src[1] = 3, nodes[1].src[2] = 4, nodes[1].dst = 6;
  nodes[2].op = OpKind::swiglu, nodes[2].src[0] = 5, nodes[2].src[1] = 6, nodes[2].dst = 7;
  nodes[3].src[0] = 2, nodes[3].src[1] = 7, nodes[3].src[2] = 4, nodes[3].dst = 8;
  const SubGraph g{tensors, nodes, 1};
  ThreadPool pool(all_threads());
  Executor exec(detect_isa(), pool);
  int32_t step = 0;
  for (auto _ : state) {
    if (n == 1)
      for (int64_t j = 0; j < used; ++j) ids[static_cast<size_t>(j)] = static_cast<int32_t>((step * used + j) % experts);
    ++step;
    if (auto st = exec.run(g); !st) state.SkipWithError(st.message().c_str());
    benchmark::ClobberMemory();
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(n * state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(isa_name(detect_isa())) + ", " + std::to_string(all_threads()) + " threads");
}

void register_all() {
  const int t = all_threads();
  benchmark::RegisterBenchmark("memory_bandwidth", memory_bandwidth)->Arg(1)->Arg(t)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
  for (auto type : {StorageType::Q4_K, StorageType::Q4_K_X16, StorageType::Q6_K, StorageType::Q6_K_X16, StorageType::Q8_0, StorageType::Q8_0_X16,
                    StorageType::Q4_0, StorageType::Q4_0_X16,
                    StorageType::Q5_K, StorageType::IQ4_XS, StorageType::F16, StorageType::F32,
                    StorageType::I4_G128, StorageType::I4_G128_X16, StorageType::I8_G128, StorageType::FP8_E4M3_B128})
    benchmark::RegisterBenchmark(("gemv/" + std::string(storage_type_name(type))).c_str(),
                                 [type](benchmark::State& s) { gemv(s, type); })
        ->Arg(1)->Arg(t)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
  for (auto type : {StorageType::Q4_0, StorageType::Q4_0_X16, StorageType::Q4_K, StorageType::Q4_K_X16, StorageType::Q6_K, StorageType::Q6_K_X16, StorageType::Q8_0, StorageType::I4_G32,
                    StorageType::I4_G32_X16, StorageType::I4_G64, StorageType::I4_G64_X16, StorageType::I4_G128,
                    StorageType::I4_G128_X16, StorageType::I8_G32, StorageType::I8_G128,
                    StorageType::FP8_E4M3_B128, StorageType::FP8_E5M2_B128})
    benchmark::RegisterBenchmark(("gemv_shape/" + std::string(storage_type_name(type))).c_str(),
                                 [type](benchmark::State& s) { gemv_shape(s, type); })
        ->Args({4096, t, 1})->Args({12288, t, 1})->Args({4096, t, 0})->Args({4096, 1, 1})->Args({4096, 1, 0})
        ->ArgNames({"rows", "threads", "memory"})
        ->UseRealTime()->Unit(benchmark::kMicrosecond);
  for (auto type : {StorageType::Q4_K, StorageType::Q6_K, StorageType::Q8_0, StorageType::Q4_0, StorageType::Q5_K,
                    StorageType::IQ4_XS, StorageType::Q4_1, StorageType::Q5_0, StorageType::Q5_1, StorageType::IQ4_NL,
                    StorageType::Q2_K, StorageType::Q3_K, StorageType::BF16, StorageType::F16, StorageType::I4_G32,
                    StorageType::I4_G128, StorageType::I8_G128, StorageType::FP8_E4M3_B128, StorageType::FP8_E5M2_B128})
    benchmark::RegisterBenchmark(("dot_cached/" + std::string(storage_type_name(type))).c_str(),
                                 [type](benchmark::State& s) { dot_cached(s, type); })
        ->Unit(benchmark::kMicrosecond);
  for (auto type : {StorageType::Q4_K, StorageType::Q4_K_X16, StorageType::Q6_K, StorageType::Q6_K_X16, StorageType::Q8_0, StorageType::Q8_0_X16,
                    StorageType::Q4_0, StorageType::Q4_0_X16, StorageType::Q5_K, StorageType::IQ4_XS, StorageType::I4_G128,
                    StorageType::I4_G128_X16, StorageType::I8_G128, StorageType::FP8_E4M3_B128})
    benchmark::RegisterBenchmark(("gemm/" + std::string(storage_type_name(type))).c_str(),
                                 [type](benchmark::State& s) { gemm(s, type); })
        ->Args({t, 64})->Args({t, 256})->ArgNames({"threads", "m"})->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("moe_layer", moe_layer)->Arg(1)->Arg(512)->ArgName("tokens")->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
