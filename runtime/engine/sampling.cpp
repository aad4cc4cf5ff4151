#include "engine/sampling.hpp"

#include <cmath>
#include <string>

namespace sy::engine {

Result<SamplerChain> SamplerChain::create(registry::Registry& reg, const std::vector<pipeline::ComponentConfig>& chain,
                                          std::optional<int64_t> seed) {
  SamplerChain c;
  if (chain.empty()) return error::invalid_argument("the pipeline's `sampling` list is empty; end it with greedy or dist");
  for (const auto& s : chain) {
    ParamMap params = s.params;
    if (seed && params.find("seed")) params.set("seed", *seed);
    auto smp = reg.create_sampler(s.name, params);
    if (!smp) return Status(smp.status().code(), "sampler " + s.name + ": " + smp.status().message());
    c.samplers_.push_back(std::move(*smp));
  }
  return c;
}

Result<int32_t> SamplerChain::sample(std::span<const float> logits, const SamplerContext& ctx) {
  cands_.items.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    // -inf is a banned token (a logit bias, a constraint's mask); NaN and +inf are broken math.
    if (std::isnan(logits[i]) || logits[i] == INFINITY)
      return error::internal("the model produced a non-finite logit (" + std::to_string(logits[i]) + ") for token " +
                             std::to_string(i) + "; the weights or the computation are broken");
    cands_.items[i] = Candidate{static_cast<int32_t>(i), logits[i], 0.f};
  }
  cands_.sorted = false;
  cands_.selected = -1;
  for (auto& s : samplers_) {
    if (auto st = s->apply(cands_, ctx); !st) return st;
    if (cands_.selected >= 0) return cands_.selected;
  }
  return error::invalid_argument("the sampling chain selected no token; end it with greedy or dist");
}

void SamplerChain::reset() {
  for (auto& s : samplers_) s->reset();
}

void SamplerChain::accept(int32_t token) {
  for (auto& s : samplers_) s->accept(token);
}

}  // namespace sy::engine
