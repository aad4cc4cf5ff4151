#include "synth/random_fill.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include "switchyard/quant.hpp"

namespace sy::synth {
namespace {

// Pool entries: 4096 blocks of 32, 1024 of 256 (a power of two: picks are masked). A row of
// 2048 values has 1024^8 or more possible contents, and building a pool stays cheap.
constexpr uint64_t pool_chunks(uint64_t chunk_elems) { return chunk_elems >= 256 ? 1024 : 4096; }
constexpr uint64_t kSpanBytes = 1ull << 20;  // each output MiB has its own generator

double sigma_of(const TensorSpec& s) {
  return s.init == Init::linear ? s.scale / std::sqrt(static_cast<double>(s.shape[0])) : s.scale;
}

}  // namespace

uint64_t name_hash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

const TensorFiller::Pool& TensorFiller::pool(StorageType type, double sigma) {
  auto [it, fresh] = pools_.try_emplace({type, sigma});
  Pool& p = it->second;
  if (!fresh) return p;
  const auto& info = storage_type_info(type);
  p.chunk_elems = info.block_size > 1 ? info.block_size : 32;
  p.chunk_bytes = *storage_row_bytes(type, p.chunk_elems);
  p.chunks = pool_chunks(p.chunk_elems);
  p.data.resize(p.chunks * p.chunk_bytes);
  NormalRng rng(seed_ ^ name_hash(info.name) ^ static_cast<uint64_t>(sigma * 0x1p40));
  std::vector<float> f(p.chunk_elems);
  for (uint64_t c = 0; c < p.chunks; ++c) {
    for (auto& x : f) x = static_cast<float>(rng.normal() * sigma);
    (void)quantize_row(type, f.data(), p.data.data() + c * p.chunk_bytes, static_cast<int64_t>(p.chunk_elems));
  }
  return p;
}

Status TensorFiller::fill(const TensorSpec& spec, const TensorDesc& desc, std::span<std::byte> out) {
  const uint64_t seed = seed_ ^ name_hash(spec.name);
  if (desc.type == StorageType::F32 && !spec.matrix) {  // norms, biases, router: small, drawn directly
    NormalRng rng(seed);
    auto* f = reinterpret_cast<float*>(out.data());
    const uint64_t n = out.size() / sizeof(float);
    for (uint64_t i = 0; i < n; ++i) {
      switch (spec.init) {
        case Init::linear: f[i] = static_cast<float>(rng.normal() * sigma_of(spec)); break;
        case Init::normal: f[i] = static_cast<float>(rng.normal() * spec.scale); break;
        case Init::norm: f[i] = static_cast<float>(1.0 + 0.1 * rng.normal()); break;
        case Init::constant: f[i] = static_cast<float>(spec.scale); break;
      }
    }
    return {};
  }
  if (!can_quantize(desc.type))
    return error::unsupported("synth cannot write " + std::string(storage_type_name(desc.type)));
  const Pool& p = pool(desc.type, sigma_of(spec));
  if (out.size() % p.chunk_bytes) return error::internal("tensor size is not a whole number of blocks");
  const uint64_t spans = (out.size() + kSpanBytes - 1) / kSpanBytes;
  // Each span's picks depend only on (seed, span), so the bytes do not depend on threads.
  auto work = [&](uint64_t first, uint64_t step) {
    for (uint64_t s = first; s < spans; s += step) {
      SplitMix64 g(seed ^ (s * 0x9E3779B97F4A7C15ull));
      const uint64_t begin = s * kSpanBytes, end = std::min<uint64_t>(out.size(), begin + kSpanBytes);
      for (uint64_t o = (begin + p.chunk_bytes - 1) / p.chunk_bytes * p.chunk_bytes; o < end; o += p.chunk_bytes)
        std::memcpy(out.data() + o, p.data.data() + (g.next() & (p.chunks - 1)) * p.chunk_bytes, p.chunk_bytes);
    }
  };
  const uint64_t n_threads =
      std::min<uint64_t>(spans, threads_ > 0 ? static_cast<uint64_t>(threads_) : std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool_threads;
  for (uint64_t t = 1; t < n_threads; ++t) pool_threads.emplace_back(work, t, n_threads);
  work(0, n_threads);
  for (auto& th : pool_threads) th.join();
  return {};
}

}  // namespace sy::synth
