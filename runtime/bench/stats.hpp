// Summary statistics of repeated measurements, as llama-bench reports them (mean and the
// sample standard deviation), plus the median and range `--compare` uses on a noisy machine.
#pragma once

#include <span>

namespace sy::bench {

struct Summary {
  double mean = 0, sd = 0, median = 0, min = 0, max = 0;
  int n = 0;
};

/// sd is the sample standard deviation (n - 1 in the denominator; 0 for one sample).
/// An empty span gives all zeros.
Summary summarize(std::span<const double> xs);

}  // namespace sy::bench
