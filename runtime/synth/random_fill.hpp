// Deterministic random tensor data for synth. Quantized matrices are assembled from a
// pool of blocks (1024 to 4096) drawn once per (type, scale) from N(0, sigma^2) by the type's reference
// quantizer; a tensor is then written block by block, picking pool entries with a seeded
// generator. So no tensor ever exists in f32, writing costs about a memcpy per block, and
// every block has the scales and zero mean of a properly quantized Gaussian (naive random
// codes would give non-zero-mean rows that push every token the same way).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "switchyard/rng.hpp"
#include "switchyard/status.hpp"
#include "switchyard/tensor.hpp"
#include "synth/layout.hpp"

namespace sy::synth {

/// Normal deviates by Box-Muller over SplitMix64: the same numbers on every platform.
class NormalRng {
 public:
  explicit NormalRng(uint64_t seed) : g_(seed) {}
  uint64_t next() { return g_.next(); }
  double uniform() { return (static_cast<double>(g_.next() >> 11) + 0.5) * 0x1.0p-53; }  // never 0: log() below
  double normal() {
    const double u = uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }

 private:
  SplitMix64 g_;
};

/// FNV-1a of a name: a tensor's seed is the model seed xor the hash of its name, so adding
/// or scaling one tensor never changes another's values.
uint64_t name_hash(std::string_view s);

class TensorFiller {
 public:
  explicit TensorFiller(uint64_t seed, int threads = 0) : seed_(seed), threads_(threads) {}
  /// Writes the data of `spec` stored as `desc` (desc.bytes long) into out.
  Status fill(const TensorSpec& spec, const TensorDesc& desc, std::span<std::byte> out);

 private:
  struct Pool {
    uint64_t chunk_elems = 0, chunk_bytes = 0, chunks = 0;
    std::vector<std::byte> data;
  };
  const Pool& pool(StorageType type, double sigma);

  uint64_t seed_;
  int threads_;
  std::map<std::pair<StorageType, double>, Pool> pools_;
};

}  // namespace sy::synth
