// The samplers' random numbers: the SDK's SplitMix64, seeded from the "seed" parameter.
#pragma once

#include <cstdint>
#include <random>

#include "switchyard/params.hpp"
#include "switchyard/rng.hpp"

namespace sy::samplers {

using sy::SplitMix64;

/// The "seed" parameter, or a random one when it is "random" or absent.
inline uint64_t seed_param(const ParamMap& p) {
  if (auto s = p.get_int("seed")) return static_cast<uint64_t>(*s);
  return (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
}

}  // namespace sy::samplers
