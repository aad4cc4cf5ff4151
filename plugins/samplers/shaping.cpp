// Samplers that reshape or truncate the distribution: temperature, top_k, top_p, min_p.
#include <algorithm>
#include <cmath>

#include "candidates.hpp"
#include "samplers.hpp"

namespace sy::samplers {
namespace {

class Temperature final : public Sampler {
 public:
  explicit Temperature(double t) : t_(t) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (auto st = check_finite(c, "temperature"); !st) return st;
    if (c.items.empty()) return Status::ok();
    if (t_ <= 0) {  // temperature 0 means greedy: keep only the best candidate
      if (!c.sorted) std::iter_swap(c.items.begin(), std::min_element(c.items.begin(), c.items.end(), by_logit));
      c.items.erase(c.items.begin() + 1, c.items.end());
      c.sorted = true;
      return Status::ok();
    }
    for (auto& x : c.items) x.logit = static_cast<float>(x.logit / t_);
    return Status::ok();
  }

 private:
  double t_;
};

class TopK final : public Sampler {
 public:
  explicit TopK(int64_t k) : k_(k) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (k_ <= 0 || static_cast<size_t>(k_) >= c.items.size()) return Status::ok();  // 0 disables
    // Only the k best need ordering: a full sort of a 150k-250k vocabulary cost more than
    // a decode step of a small model. The order (logit, then id) is sort_by_logit's, so the
    // kept prefix is the same.
    if (!c.sorted) {
      std::partial_sort(c.items.begin(), c.items.begin() + k_, c.items.end(), by_logit);
      c.sorted = true;
    }
    c.items.resize(static_cast<size_t>(k_));
    return Status::ok();
  }

 private:
  int64_t k_;
};

class TopP final : public Sampler {
 public:
  TopP(double p, int64_t min_keep) : p_(p), min_keep_(static_cast<size_t>(std::max<int64_t>(1, min_keep))) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (auto st = check_finite(c, "top_p"); !st) return st;
    if (p_ >= 1.0 || c.items.empty()) return Status::ok();
    sort_by_logit(c);
    softmax(c);
    // Keep the smallest prefix whose probability mass reaches p.
    double cum = 0;
    size_t keep = c.items.size();
    for (size_t i = 0; i < c.items.size(); ++i) {
      cum += c.items[i].p;
      if (cum >= p_ && i + 1 >= min_keep_) {
        keep = i + 1;
        break;
      }
    }
    c.items.resize(keep);
    return Status::ok();
  }

 private:
  double p_;
  size_t min_keep_;
};

class MinP final : public Sampler {
 public:
  MinP(double p, int64_t min_keep) : p_(p), min_keep_(static_cast<size_t>(std::max<int64_t>(1, min_keep))) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    if (auto st = check_finite(c, "min_p"); !st) return st;
    if (p_ <= 0 || c.items.empty()) return Status::ok();
    sort_by_logit(c);
    // p_i >= p * p_max  <=>  logit_i >= logit_max + ln(p)
    const double threshold = c.items.front().logit + std::log(p_);
    size_t keep = 0;
    while (keep < c.items.size() && (c.items[keep].logit >= threshold || keep < min_keep_)) ++keep;
    c.items.resize(keep);
    return Status::ok();
  }

 private:
  double p_;
  size_t min_keep_;
};

}  // namespace

Result<std::unique_ptr<Component>> make_temperature(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<Temperature>(p.get_number("t").value_or(0.8));
  });
}
Result<std::unique_ptr<Component>> make_top_k(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<TopK>(p.get_int("k").value_or(40));
  });
}
Result<std::unique_ptr<Component>> make_top_p(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<TopP>(p.get_number("p").value_or(0.95), p.get_int("min_keep").value_or(1));
  });
}
Result<std::unique_ptr<Component>> make_min_p(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<MinP>(p.get_number("p").value_or(0.05), p.get_int("min_keep").value_or(1));
  });
}

}  // namespace sy::samplers
