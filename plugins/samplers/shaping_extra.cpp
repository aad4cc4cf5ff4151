// More distribution-shaping samplers: typical_p (locally typical sampling), xtc (exclude
// top choices) and logit_bias.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "candidates.hpp"
#include "rng.hpp"
#include "samplers.hpp"

namespace sy::samplers {
namespace {

// Keeps the tokens whose surprise is closest to the distribution's entropy, until their
// mass reaches p (Meister et al., as llama.cpp implements it).
class TypicalP final : public Sampler {
 public:
  TypicalP(double p, int64_t min_keep) : p_(p), min_keep_(static_cast<size_t>(std::max<int64_t>(1, min_keep))) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (auto st = check_finite(c, "typical_p"); !st) return st;
    if (p_ >= 1.0 || c.items.size() <= 1) return Status::ok();
    sort_by_logit(c);
    softmax(c);
    double entropy = 0;
    for (const auto& x : c.items)
      if (x.p > 0) entropy -= x.p * std::log(static_cast<double>(x.p));
    auto shift = [&](const Candidate& x) { return std::fabs(-std::log(static_cast<double>(x.p)) - entropy); };
    std::stable_sort(c.items.begin(), c.items.end(), [&](const Candidate& a, const Candidate& b) { return shift(a) < shift(b); });
    double cum = 0;
    size_t keep = c.items.size();
    for (size_t i = 0; i < c.items.size(); ++i) {
      cum += c.items[i].p;
      if (cum > p_ && i + 1 >= min_keep_) {
        keep = i + 1;
        break;
      }
    }
    c.items.resize(keep);
    c.sorted = false;
    return Status::ok();
  }

 private:
  double p_;
  size_t min_keep_;
};

// With probability `probability`, removes every token at least `threshold` likely except
// the least likely of them, pushing the model off its most predictable choices.
class Xtc final : public Sampler {
 public:
  Xtc(double probability, double threshold, int64_t min_keep, uint64_t seed)
      : probability_(probability), threshold_(threshold), min_keep_(static_cast<size_t>(std::max<int64_t>(1, min_keep))),
        seed_(seed), rng_(seed) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (auto st = check_finite(c, "xtc"); !st) return st;
    if (probability_ <= 0 || threshold_ > 0.5 || c.items.size() < 2) return Status::ok();
    if (rng_.uniform() >= probability_) return Status::ok();
    sort_by_logit(c);
    softmax(c);
    size_t above = 0;
    while (above < c.items.size() && c.items[above].p >= threshold_) ++above;
    if (above < 2 || c.items.size() - (above - 1) < min_keep_) return Status::ok();
    c.items.erase(c.items.begin(), c.items.begin() + static_cast<std::ptrdiff_t>(above - 1));
    return Status::ok();
  }
  void reset() noexcept override { rng_ = SplitMix64(seed_); }

 private:
  double probability_, threshold_;
  size_t min_keep_;
  uint64_t seed_;
  SplitMix64 rng_;
};

class LogitBias final : public Sampler {
 public:
  explicit LogitBias(std::unordered_map<int32_t, float> bias) : bias_(std::move(bias)) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    for (auto& x : c.items)
      if (const auto it = bias_.find(x.id); it != bias_.end()) x.logit += it->second;
    c.sorted = false;
    return Status::ok();
  }

 private:
  std::unordered_map<int32_t, float> bias_;
};

}  // namespace

Result<std::unique_ptr<Component>> make_typical_p(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<TypicalP>(p.get_number("p").value_or(1.0), p.get_int("min_keep").value_or(1));
  });
}

Result<std::unique_ptr<Component>> make_xtc(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<Xtc>(p.get_number("probability").value_or(0.5), p.get_number("threshold").value_or(0.1),
                                 p.get_int("min_keep").value_or(1), seed_param(p));
  });
}

Result<std::unique_ptr<Component>> make_logit_bias(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    std::unordered_map<int32_t, float> bias;
    for (const auto& e : p.get_string_list("bias").value_or(std::vector<std::string>{})) {
      // "ID:BIAS", e.g. "15043:+2.5" or "2:-inf" (never choose token 2).
      const auto colon = e.find(':');
      try {
        if (colon == std::string::npos) throw std::invalid_argument(e);
        size_t used = 0;
        const long id = std::stol(e.substr(0, colon), &used);
        // Token ids are int32 everywhere; a larger one would wrap to some other token.
        if (used != colon || id < 0 || id > INT32_MAX) throw std::invalid_argument(e);
        const std::string v = e.substr(colon + 1);
        const float b = v == "-inf" ? -INFINITY : std::stof(v, &used);
        if (v != "-inf" && used != v.size()) throw std::invalid_argument(e);
        if (std::isnan(b) || b == INFINITY) throw std::invalid_argument(e);
        bias[static_cast<int32_t>(id)] = b;
      } catch (const std::exception&) {
        return error::invalid_argument("logit_bias: '" + e +
                                       "' is not TOKEN_ID:BIAS (for example \"15043:+2.5\", or \"2:-inf\" to ban token 2)");
      }
    }
    return std::make_unique<LogitBias>(std::move(bias));
  });
}

}  // namespace sy::samplers
