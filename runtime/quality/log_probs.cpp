#include "quality/log_probs.hpp"

#include <cmath>

namespace sy::quality {

RowSoftmax row_softmax(std::span<const float> logits) {
  RowSoftmax s;
  s.max = logits[0];
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > s.max) {
      s.max = logits[i];
      s.argmax = static_cast<int32_t>(i);
    }
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - s.max);
  s.log_sum = std::log(sum);
  return s;
}

double NllSums::perplexity() const { return std::exp(mean()); }

double NllSums::perplexity_error() const {
  if (count < 2) return 0;
  const double m = mean();
  const double var = sum2 / static_cast<double>(count) - m * m;
  return var > 0 ? perplexity() * std::sqrt(var / static_cast<double>(count - 1)) : 0.0;
}

}  // namespace sy::quality
