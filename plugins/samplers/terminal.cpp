// Samplers that pick the token: greedy and dist.
#include <cmath>
#include <random>

#include "candidates.hpp"
#include "rng.hpp"
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

// Mirostat 2.0 (Basu et al.): keeps the surprise of chosen tokens near tau by truncating
// tokens more surprising than mu, then adjusting mu by the error it observed.
class MirostatV2 final : public Sampler {
 public:
  MirostatV2(double tau, double eta, uint64_t seed) : tau_(tau), eta_(eta), mu_(2 * tau), seed_(seed), rng_(seed) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (auto st = check_finite(c, "mirostat_v2"); !st) return st;
    if (c.items.empty()) return error::invalid_argument("mirostat_v2: no candidates are left to choose from");
    sort_by_logit(c);
    softmax(c);
    size_t keep = 0;
    while (keep < c.items.size() && -std::log2(static_cast<double>(c.items[keep].p)) <= mu_) ++keep;
    c.items.resize(std::max<size_t>(keep, 1));
    softmax(c);
    const double u = rng_.uniform();
    double acc = 0;
    size_t pick = c.items.size() - 1;
    for (size_t i = 0; i < c.items.size(); ++i) {
      acc += c.items[i].p;
      if (u < acc) {
        pick = i;
        break;
      }
    }
    c.selected = c.items[pick].id;
    mu_ -= eta_ * (-std::log2(static_cast<double>(c.items[pick].p)) - tau_);
    return Status::ok();
  }
  void reset() noexcept override {
    mu_ = 2 * tau_;
    rng_ = SplitMix64(seed_);
  }

 private:
  double tau_, eta_, mu_;
  uint64_t seed_;
  SplitMix64 rng_;
};

}  // namespace

Result<std::unique_ptr<Component>> make_mirostat_v2(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<MirostatV2>(p.get_number("tau").value_or(5.0), p.get_number("eta").value_or(0.1), seed_param(p));
  });
}

Result<std::unique_ptr<Component>> make_greedy(const ParamMap&) noexcept {
  return guard_factory([]() -> Result<std::unique_ptr<Component>> { return std::make_unique<Greedy>(); });
}

Result<std::unique_ptr<Component>> make_dist(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<Dist>(seed_param(p));
  });
}

}  // namespace sy::samplers
