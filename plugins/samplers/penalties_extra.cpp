// presence_penalty and frequency_penalty (OpenAI's definitions) and DRY ("don't repeat
// yourself": penalise the token that would extend a sequence already seen).
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "samplers.hpp"

namespace sy::samplers {
namespace {

// The last `last_n` tokens of prompt + output (-1: all), oldest first.
std::vector<int32_t> window(const SamplerContext& ctx, int64_t last_n) {
  std::vector<int32_t> h(ctx.prompt.begin(), ctx.prompt.end());
  h.insert(h.end(), ctx.output.begin(), ctx.output.end());
  if (last_n >= 0 && h.size() > static_cast<size_t>(last_n)) h.erase(h.begin(), h.end() - last_n);
  return h;
}

// logit -= presence * [count > 0] + frequency * count.
class CountPenalty final : public Sampler {
 public:
  CountPenalty(double presence, double frequency, int64_t last_n) : presence_(presence), frequency_(frequency), last_n_(last_n) {}
  Status apply(CandidateList& c, const SamplerContext& ctx) noexcept override {
    if ((presence_ == 0 && frequency_ == 0) || last_n_ == 0) return Status::ok();
    std::unordered_map<int32_t, int> counts;
    for (int32_t t : window(ctx, last_n_)) ++counts[t];
    for (auto& x : c.items)
      if (const auto it = counts.find(x.id); it != counts.end())
        x.logit -= static_cast<float>(presence_ + frequency_ * it->second);
    c.sorted = false;
    return Status::ok();
  }

 private:
  double presence_, frequency_;
  int64_t last_n_;
};

// DRY (koboldcpp, llama.cpp): if the context ends with a sequence of n >= allowed_length
// tokens that also occurred earlier followed by token t, t's logit loses
// multiplier * base^(n - allowed_length). Sequence breakers (tokens whose text contains
// one of the breaker strings) end matching, so repeating formatting is not punished.
class Dry final : public Sampler {
 public:
  Dry(double multiplier, double base, int64_t allowed, int64_t last_n, std::vector<std::string> breakers)
      : multiplier_(multiplier), base_(base), allowed_(allowed), last_n_(last_n), breakers_(std::move(breakers)) {}
  Status apply(CandidateList& c, const SamplerContext& ctx) noexcept override {
    if (multiplier_ == 0 || last_n_ == 0) return Status::ok();
    const std::vector<int32_t> h = window(ctx, last_n_);
    const auto n = static_cast<int64_t>(h.size());
    if (n < 2) return Status::ok();
    auto breaker = [&](int32_t t) {
      if (t < 0 || static_cast<size_t>(t) >= ctx.pieces.size()) return false;
      const std::string& s = ctx.pieces[static_cast<size_t>(t)];
      return std::any_of(breakers_.begin(), breakers_.end(), [&](const std::string& b) { return s.find(b) != std::string::npos; });
    };
    std::unordered_map<int32_t, int64_t> longest;  // next token -> longest match before it
    for (int64_t j = n - 2; j >= 0; --j) {
      const int32_t next = h[static_cast<size_t>(j + 1)];
      if (breaker(next)) continue;
      int64_t len = 0;
      while (len <= j && h[static_cast<size_t>(j - len)] == h[static_cast<size_t>(n - 1 - len)] &&
             !breaker(h[static_cast<size_t>(j - len)]) && n - 1 - len > j)
        ++len;
      if (len > 0) longest[next] = std::max(longest[next], len);
    }
    for (auto& x : c.items) {
      const auto it = longest.find(x.id);
      if (it == longest.end() || it->second < allowed_) continue;
      x.logit -= static_cast<float>(multiplier_ * std::pow(base_, static_cast<double>(it->second - allowed_)));
    }
    c.sorted = false;
    return Status::ok();
  }

 private:
  double multiplier_, base_;
  int64_t allowed_, last_n_;
  std::vector<std::string> breakers_;
};

}  // namespace

Result<std::unique_ptr<Component>> make_presence_penalty(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<CountPenalty>(p.get_number("penalty").value_or(0.0), 0.0, p.get_int("last_n").value_or(64));
  });
}

Result<std::unique_ptr<Component>> make_frequency_penalty(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<CountPenalty>(0.0, p.get_number("penalty").value_or(0.0), p.get_int("last_n").value_or(64));
  });
}

Result<std::unique_ptr<Component>> make_dry(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<Dry>(p.get_number("multiplier").value_or(0.8), p.get_number("base").value_or(1.75),
                                 p.get_int("allowed_length").value_or(2), p.get_int("last_n").value_or(-1),
                                 p.get_string_list("sequence_breakers").value_or(std::vector<std::string>{"\n", ":", "\"", "*"}));
  });
}

}  // namespace sy::samplers
