// Samplers that pick the token: greedy and dist.
#include <cmath>
#include <random>

#include "candidates.hpp"
#include "samplers.hpp"

namespace sy::samplers {
namespace {

class Greedy final : public Sampler {
 public:
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (auto st = check_finite(c, "greedy"); !st) return st;
    if (c.items.empty()) return error::invalid_argument("greedy: no candidates are left to choose from");
    const Candidate* best = &c.items.front();
    for (const auto& x : c.items)
      if (x.logit > best->logit || (x.logit == best->logit && x.id < best->id)) best = &x;
    c.selected = best->id;
    return Status::ok();
  }
};

// SplitMix64: tiny, fully specified, so a seed gives the same stream on every platform
// (std::uniform_real_distribution is not portable across standard libraries).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_;
};

class Dist final : public Sampler {
 public:
  explicit Dist(uint64_t seed) : seed_(seed), rng_(seed) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (auto st = check_finite(c, "dist"); !st) return st;
    if (c.items.empty()) return error::invalid_argument("dist: no candidates are left to choose from");
    sort_by_logit(c);
    softmax(c);
    // Cumulative sum in double in sorted order: identical on every platform.
    double total = 0;
    for (const auto& x : c.items) total += x.p;
    const double u = rng_.uniform() * total;
    double acc = 0;
    for (const auto& x : c.items) {
      acc += x.p;
      if (u < acc) {
        c.selected = x.id;
        return Status::ok();
      }
    }
    c.selected = c.items.back().id;  // u within rounding of total
    return Status::ok();
  }
  void reset() noexcept override { rng_ = SplitMix64(seed_); }

 private:
  uint64_t seed_;
  SplitMix64 rng_;
};

}  // namespace

Result<std::unique_ptr<Component>> make_greedy(const ParamMap&) noexcept {
  return guard_factory([]() -> Result<std::unique_ptr<Component>> { return std::make_unique<Greedy>(); });
}

Result<std::unique_ptr<Component>> make_dist(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    uint64_t seed = 0;
    if (auto s = p.get_int("seed"))
      seed = static_cast<uint64_t>(*s);
    else
      seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();  // "random"
    return std::make_unique<Dist>(seed);
  });
}

}  // namespace sy::samplers
