// Log-probabilities of a logit row, the one computation perplexity and KL divergence share:
// the row's largest logit (first of equals) and log of the softmax normaliser, summed in
// double, so -log p(target) = max + log_sum - logit[target].
#pragma once

#include <cstdint>
#include <span>

namespace sy::quality {

struct RowSoftmax {
  float max = 0;        ///< the largest logit
  int32_t argmax = 0;   ///< its index (the first of equal ones)
  double log_sum = 0;   ///< log sum exp(logit - max)

  /// log p(i).
  [[nodiscard]] double log_prob(float logit) const { return static_cast<double>(logit) - max - log_sum; }
};

/// The softmax statistics of one row of logits (non-empty).
RowSoftmax row_softmax(std::span<const float> logits);

/// Running sums of negative log-likelihoods: perplexity exp(mean) and its error estimate
/// (the standard error of the mean, carried through exp).
struct NllSums {
  double sum = 0, sum2 = 0;
  int64_t count = 0;

  void add(double nll) {
    sum += nll;
    sum2 += nll * nll;
    ++count;
  }
  [[nodiscard]] double mean() const { return count > 0 ? sum / static_cast<double>(count) : 0.0; }
  [[nodiscard]] double perplexity() const;
  /// ppl * sqrt(var(nll) / (count - 1)); 0 with fewer than two values.
  [[nodiscard]] double perplexity_error() const;
};

}  // namespace sy::quality
