// Comparing a run's distributions with a reference run's, position by position, as
// llama-perplexity --kl-divergence reports it: both perplexities and their ratio, the KL
// divergence KL(reference || run) with its percentiles, how often the two pick the same top
// token, and the change in the probability of the text's next token (Δp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "quality/log_probs.hpp"
#include "quality/logit_file.hpp"

namespace sy::quality {

struct MeanError {
  double mean = 0, error = 0;  ///< error: standard error of the mean
};

struct KldSummary {
  int64_t count = 0;
  MeanError ppl, ppl_base, ln_ratio, kld, p_diff;  ///< ppl values already exponentiated
  double ppl_ratio = 0, ppl_ratio_error = 0, ppl_diff = 0, ppl_diff_error = 0, ln_ppl_correlation = 0;
  double kld_max = 0, kld_p999 = 0, kld_p99 = 0, kld_p95 = 0, kld_p90 = 0, kld_median = 0, kld_p10 = 0,
         kld_p5 = 0, kld_p1 = 0, kld_p01 = 0, kld_min = 0;
  double p_diff_rms = 0, p_diff_rms_error = 0, p_diff_max_abs = 0;
  double p_diff_max = 0, p_diff_p99 = 0, p_diff_p95 = 0, p_diff_median = 0, p_diff_p5 = 0, p_diff_p1 = 0,
         p_diff_min = 0;
  double same_top = 0, same_top_error = 0;  ///< fraction of positions whose top tokens agree
};

class KldAccumulator {
 public:
  /// One position: this run's logits against the reference's record; `target` is the
  /// text's next token.
  void add(std::span<const float> logits, const RowSoftmax& s, const RecordView& base, int32_t target);

  /// The statistics so far (percentiles need at least one position).
  [[nodiscard]] KldSummary summary() const;

 private:
  NllSums nll_, nll_base_;
  double nll_cross_ = 0;
  double kld_sum_ = 0, kld_sum2_ = 0;
  double dp_sum_ = 0, dp_sum2_ = 0, dp_sum4_ = 0, dp_max_abs_ = 0;
  int64_t same_top_ = 0;
  std::vector<float> kld_, p_diff_;
};

/// Linear interpolation between the sorted values around fraction * (n - 1).
double percentile(std::span<const float> sorted, double fraction);

/// The per-chunk line and the final report, as text.
std::string kld_chunk_header();
std::string kld_chunk_line(int64_t chunk, const KldSummary& s);
std::string kld_report(const KldSummary& s);

}  // namespace sy::quality
