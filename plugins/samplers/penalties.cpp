// repetition_penalty: CTRL-style penalty on tokens seen in the last `last_n` tokens.
#include <algorithm>
#include <unordered_set>

#include "samplers.hpp"

namespace sy::samplers {
namespace {

class RepetitionPenalty final : public Sampler {
 public:
  RepetitionPenalty(double penalty, int64_t last_n) : penalty_(penalty), last_n_(last_n) {}
  Status apply(CandidateList& c, const SamplerContext& ctx) noexcept override {
    if (penalty_ == 1.0 || last_n_ == 0) return Status::ok();
    // The window covers prompt and output as one history, newest last.
    std::unordered_set<int32_t> seen;
    const size_t total = ctx.prompt.size() + ctx.output.size();
    const size_t n = last_n_ < 0 ? total : std::min(total, static_cast<size_t>(last_n_));
    for (size_t i = total - n; i < total; ++i)
      seen.insert(i < ctx.prompt.size() ? ctx.prompt[i] : ctx.output[i - ctx.prompt.size()]);
    for (auto& x : c.items) {
      if (!seen.count(x.id)) continue;
      x.logit = x.logit > 0 ? static_cast<float>(x.logit / penalty_) : static_cast<float>(x.logit * penalty_);
    }
    c.sorted = false;
    return Status::ok();
  }

 private:
  double penalty_;
  int64_t last_n_;
};

}  // namespace

Result<std::unique_ptr<Component>> make_repetition_penalty(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<RepetitionPenalty>(p.get_number("penalty").value_or(1.0), p.get_int("last_n").value_or(64));
  });
}

}  // namespace sy::samplers
