#include "candidates.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace sy::samplers {

void sort_by_logit(CandidateList& c) {
  if (c.sorted) return;
  std::sort(c.items.begin(), c.items.end(), by_logit);
  c.sorted = true;
}

void softmax(CandidateList& c) {
  if (c.items.empty()) return;
  double max = -INFINITY;
  for (const auto& x : c.items) max = std::max(max, static_cast<double>(x.logit));
  double sum = 0;
  for (const auto& x : c.items) sum += std::exp(static_cast<double>(x.logit) - max);
  for (auto& x : c.items) x.p = static_cast<float>(std::exp(static_cast<double>(x.logit) - max) / sum);
}

Status check_finite(const CandidateList& c, const char* sampler) {
  for (const auto& x : c.items)
    if (std::isnan(x.logit) || x.logit == INFINITY)
      return error::invalid_argument(std::string(sampler) + ": the logit of token " + std::to_string(x.id) + " is " +
                                     (std::isnan(x.logit) ? "NaN" : "+inf") +
                                     "; the model produced invalid values, so no token can be sampled");
  return Status::ok();
}

}  // namespace sy::samplers
