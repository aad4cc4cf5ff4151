// The samplers' random numbers: SplitMix64, fully specified, so a seed gives the same
// stream on every platform (std:: distributions are not portable across libraries).
#pragma once

#include <cstdint>
#include <random>

#include "switchyard/params.hpp"

namespace sy::samplers {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_;
};

/// The "seed" parameter, or a random one when it is "random" or absent.
inline uint64_t seed_param(const ParamMap& p) {
  if (auto s = p.get_int("seed")) return static_cast<uint64_t>(*s);
  return (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
}

}  // namespace sy::samplers
