#include "quality/kld.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sy::quality {
namespace {

// Mean and standard error of the mean from running sums (no error under 10 values).
MeanError mean_error(double sum, double sum2, int64_t n) {
  if (n < 1) return {};
  const double m = sum / static_cast<double>(n);
  const double var = sum2 / static_cast<double>(n) - m * m;
  return {m, var > 0 && n > 10 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0};
}

double covariance(double sa, double sb, double sab, int64_t n) {
  if (n < 10) return 0;
  const auto c = static_cast<double>(n);
  return (sab / c - (sa / c) * (sb / c)) / (c - 1);
}

std::string format(const char* fmt, auto... v) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, v...);
  return buf;
}

}  // namespace

void KldAccumulator::add(std::span<const float> logits, const RowSoftmax& s, const RecordView& base, int32_t target) {
  const double nll = -s.log_prob(logits[static_cast<size_t>(target)]);
  const double nll_base = -static_cast<double>(base.log_prob(target));
  nll_.add(nll);
  nll_base_.add(nll_base);
  nll_cross_ += nll * nll_base;

  // KL(base || run) = sum p_base (log p_base - log p), over the reference's kept range.
  double kld = 0;
  int32_t top_base = 0;
  float top_base_lp = 0;
  for (int32_t i = 0; i < base.n_vocab; ++i) {
    const float lp_base = base.log_prob(i);
    if (i == 0 || lp_base > top_base_lp) {
      top_base_lp = lp_base;
      top_base = i;
    }
    if (lp_base > -16.0f) kld += std::exp(static_cast<double>(lp_base)) * (lp_base - s.log_prob(logits[static_cast<size_t>(i)]));
  }
  kld_sum_ += kld;
  kld_sum2_ += kld * kld;
  kld_.push_back(static_cast<float>(kld));
  same_top_ += top_base == s.argmax;

  const double dp = std::exp(-nll) - std::exp(-nll_base);
  dp_sum_ += dp;
  dp_sum2_ += dp * dp;
  dp_sum4_ += dp * dp * dp * dp;
  dp_max_abs_ = std::max(dp_max_abs_, std::fabs(dp));
  p_diff_.push_back(static_cast<float>(dp));
}

double percentile(std::span<const float> sorted, double fraction) {
  if (sorted.empty()) return 0;
  if (fraction <= 0) return sorted.front();
  if (fraction >= 1) return sorted.back();
  const double p = fraction * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<size_t>(p);
  const double f = p - static_cast<double>(i);
  return (1 - f) * sorted[i] + f * sorted[std::min(i + 1, sorted.size() - 1)];
}

KldSummary KldAccumulator::summary() const {
  KldSummary r;
  const int64_t n = nll_.count;
  r.count = n;
  if (n == 0) return r;
  const MeanError ln = mean_error(nll_.sum, nll_.sum2, n), ln_base = mean_error(nll_base_.sum, nll_base_.sum2, n);
  r.ppl = {std::exp(ln.mean), std::exp(ln.mean) * ln.error};
  r.ppl_base = {std::exp(ln_base.mean), std::exp(ln_base.mean) * ln_base.error};
  const double cov = covariance(nll_.sum, nll_base_.sum, nll_cross_, n);
  r.ln_ppl_correlation = ln.error > 0 && ln_base.error > 0 ? cov / (ln.error * ln_base.error) : 0.0;
  r.ln_ratio = {ln.mean - ln_base.mean,
                std::sqrt(std::max(0.0, ln.error * ln.error + ln_base.error * ln_base.error - 2 * cov))};
  r.ppl_ratio = std::exp(r.ln_ratio.mean);
  r.ppl_ratio_error = r.ppl_ratio * r.ln_ratio.error;
  r.ppl_diff = r.ppl.mean - r.ppl_base.mean;
  const double ppl_cov = r.ppl.mean * r.ppl_base.mean * cov;
  r.ppl_diff_error =
      std::sqrt(std::max(0.0, r.ppl.error * r.ppl.error + r.ppl_base.error * r.ppl_base.error - 2 * ppl_cov));
  r.kld = mean_error(kld_sum_, kld_sum2_, n);
  r.p_diff = mean_error(dp_sum_, dp_sum2_, n);
  const MeanError mse = mean_error(dp_sum2_, dp_sum4_, n);
  r.p_diff_rms = std::sqrt(mse.mean);
  r.p_diff_rms_error = r.p_diff_rms > 0 ? 0.5 / r.p_diff_rms * mse.error : 0.0;
  r.p_diff_max_abs = dp_max_abs_;
  r.same_top = static_cast<double>(same_top_) / static_cast<double>(n);
  r.same_top_error = n > 1 ? std::sqrt(r.same_top * (1 - r.same_top) / static_cast<double>(n - 1)) : 0.0;

  std::vector<float> k = kld_, d = p_diff_;
  std::sort(k.begin(), k.end());
  std::sort(d.begin(), d.end());
  r.kld_max = k.back();
  r.kld_p999 = percentile(k, 0.999);
  r.kld_p99 = percentile(k, 0.99);
  r.kld_p95 = percentile(k, 0.95);
  r.kld_p90 = percentile(k, 0.90);
  r.kld_median = percentile(k, 0.5);
  r.kld_p10 = percentile(k, 0.10);
  r.kld_p5 = percentile(k, 0.05);
  r.kld_p1 = percentile(k, 0.01);
  r.kld_p01 = percentile(k, 0.001);
  r.kld_min = k.front();
  r.p_diff_max = d.back();
  r.p_diff_p99 = percentile(d, 0.99);
  r.p_diff_p95 = percentile(d, 0.95);
  r.p_diff_median = percentile(d, 0.5);
  r.p_diff_p5 = percentile(d, 0.05);
  r.p_diff_p1 = percentile(d, 0.01);
  r.p_diff_min = d.front();
  return r;
}

std::string kld_chunk_header() {
  return "chunk             PPL          ln(PPL(Q)/PPL(base))       KL divergence            Δp RMS           Same top p\n";
}

std::string kld_chunk_line(int64_t chunk, const KldSummary& s) {
  return format("%4lld  %9.4f ± %8.4f  %10.5f ± %9.5f  %10.5f ± %9.5f  %6.3f ± %6.3f %%  %6.3f ± %6.3f %%\n",
                static_cast<long long>(chunk), s.ppl.mean, s.ppl.error, s.ln_ratio.mean, s.ln_ratio.error, s.kld.mean,
                s.kld.error, 100 * s.p_diff_rms, 100 * s.p_diff_rms_error, 100 * s.same_top, 100 * s.same_top_error);
}

std::string kld_report(const KldSummary& s) {
  std::string o = "====== Perplexity statistics ======\n";
  o += format("Mean PPL(Q)                   : %10.6f ± %10.6f\n", s.ppl.mean, s.ppl.error);
  o += format("Mean PPL(base)                : %10.6f ± %10.6f\n", s.ppl_base.mean, s.ppl_base.error);
  o += format("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100 * s.ln_ppl_correlation);
  o += format("Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", s.ln_ratio.mean, s.ln_ratio.error);
  o += format("Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", s.ppl_ratio, s.ppl_ratio_error);
  o += format("Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f\n", s.ppl_diff, s.ppl_diff_error);
  o += "\n====== KL divergence statistics ======\n";
  o += format("Mean    KLD: %10.6f ± %10.6f\n", s.kld.mean, s.kld.error);
  o += format("Maximum KLD: %10.6f\n99.9%%   KLD: %10.6f\n99.0%%   KLD: %10.6f\n95.0%%   KLD: %10.6f\n", s.kld_max,
              s.kld_p999, s.kld_p99, s.kld_p95);
  o += format("90.0%%   KLD: %10.6f\nMedian  KLD: %10.6f\n10.0%%   KLD: %10.6f\n 5.0%%   KLD: %10.6f\n", s.kld_p90,
              s.kld_median, s.kld_p10, s.kld_p5);
  o += format(" 1.0%%   KLD: %10.6f\n 0.1%%   KLD: %10.6f\nMinimum KLD: %10.6f\n", s.kld_p1, s.kld_p01, s.kld_min);
  o += "\n====== Token probability statistics ======\n";
  o += format("Mean    Δp: %6.3f ± %5.3f %%\n", 100 * s.p_diff.mean, 100 * s.p_diff.error);
  o += format("Maximum Δp: %6.3f%%\n99.0%%   Δp: %6.3f%%\n95.0%%   Δp: %6.3f%%\nMedian  Δp: %6.3f%%\n", 100 * s.p_diff_max,
              100 * s.p_diff_p99, 100 * s.p_diff_p95, 100 * s.p_diff_median);
  o += format(" 5.0%%   Δp: %6.3f%%\n 1.0%%   Δp: %6.3f%%\nMinimum Δp: %6.3f%%\n", 100 * s.p_diff_p5, 100 * s.p_diff_p1,
              100 * s.p_diff_min);
  o += format("RMS Δp    : %6.3f ± %5.3f %%\n", 100 * s.p_diff_rms, 100 * s.p_diff_rms_error);
  o += format("Same top p: %6.3f ± %5.3f %%\n", 100 * s.same_top, 100 * s.same_top_error);
  return o;
}

}  // namespace sy::quality
