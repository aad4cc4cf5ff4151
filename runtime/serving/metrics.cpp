#include "serving/metrics.hpp"

#include <sstream>

namespace sy::serving {
namespace {

std::vector<double> latency_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

void Histogram::observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

void Histogram::render(const std::string& name, const std::string& help, std::string& out) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out += name + "_bucket{le=\"" + num(bounds_[i]) + "\"} " + std::to_string(cum) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + num(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics() : queue_(latency_buckets()), ttft_(latency_buckets()), itl_(latency_buckets()) {}

void Metrics::finished(const std::string& outcome) {
  std::lock_guard lk(mu_);
  ++outcomes_[outcome];
}
void Metrics::http_status(int status) {
  std::lock_guard lk(mu_);
  ++statuses_[status];
}
void Metrics::queue_time(double s) {
  std::lock_guard lk(mu_);
  queue_.observe(s);
}
void Metrics::first_token(double s) {
  std::lock_guard lk(mu_);
  ttft_.observe(s);
}
void Metrics::inter_token(double s) {
  std::lock_guard lk(mu_);
  itl_.observe(s);
}
void Metrics::tokens(int64_t prompt, int64_t generated, int64_t cached) {
  std::lock_guard lk(mu_);
  prompt_tokens_ += static_cast<uint64_t>(prompt);
  generated_tokens_ += static_cast<uint64_t>(generated);
  cached_tokens_ += static_cast<uint64_t>(cached);
}
void Metrics::preempted() {
  std::lock_guard lk(mu_);
  ++preemptions_;
}
void Metrics::step(double seconds, int64_t) {
  std::lock_guard lk(mu_);
  ++steps_;
  busy_seconds_ += seconds;
}
void Metrics::set_gauges(const Gauges& g) {
  std::lock_guard lk(mu_);
  gauges_ = g;
}
Gauges Metrics::gauges() const {
  std::lock_guard lk(mu_);
  return gauges_;
}

std::string Metrics::render() const {
  std::lock_guard lk(mu_);
  std::string out;
  auto counter = [&](const std::string& name, const std::string& help, double v) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " + num(v) + "\n";
  };
  auto gauge = [&](const std::string& name, const std::string& help, int64_t v) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " + std::to_string(v) + "\n";
  };
  out += "# HELP switchyard_requests_total Requests answered, by HTTP status.\n# TYPE switchyard_requests_total counter\n";
  for (const auto& [status, n] : statuses_)
    out += "switchyard_requests_total{status=\"" + std::to_string(status) + "\"} " + std::to_string(n) + "\n";
  out += "# HELP switchyard_generations_total Generations ended, by how they ended.\n"
         "# TYPE switchyard_generations_total counter\n";
  for (const auto& [outcome, n] : outcomes_)
    out += "switchyard_generations_total{outcome=\"" + outcome + "\"} " + std::to_string(n) + "\n";
  queue_.render("switchyard_queue_seconds", "Time from arrival to admission into a slot.", out);
  ttft_.render("switchyard_time_to_first_token_seconds", "Time from arrival to the first generated token.", out);
  itl_.render("switchyard_inter_token_seconds", "Time between consecutive tokens of a sequence.", out);
  counter("switchyard_prompt_tokens_total", "Prompt tokens processed or served from the prefix cache.",
          static_cast<double>(prompt_tokens_));
  counter("switchyard_generated_tokens_total", "Tokens generated.", static_cast<double>(generated_tokens_));
  counter("switchyard_prefix_cache_hit_tokens_total", "Prompt tokens served from the prefix cache.",
          static_cast<double>(cached_tokens_));
  counter("switchyard_preemptions_total", "Sequences preempted for KV blocks (recomputed later).",
          static_cast<double>(preemptions_));
  counter("switchyard_engine_steps_total", "Engine steps run.", static_cast<double>(steps_));
  counter("switchyard_engine_busy_seconds_total", "Engine time spent in steps.", busy_seconds_);
  out += "# HELP switchyard_tokens_per_second Generated tokens per second of engine time.\n"
         "# TYPE switchyard_tokens_per_second gauge\nswitchyard_tokens_per_second " +
         num(busy_seconds_ > 0 ? static_cast<double>(generated_tokens_) / busy_seconds_ : 0.0) + "\n";
  gauge("switchyard_slots_busy", "Sequences being generated now.", gauges_.slots_busy);
  gauge("switchyard_slots_total", "Sequences that can be generated at once.", gauges_.slots_total);
  gauge("switchyard_queue_waiting_interactive", "Interactive requests waiting for a slot.", gauges_.waiting_interactive);
  gauge("switchyard_queue_waiting_batch", "Batch requests waiting for a slot.", gauges_.waiting_batch);
  gauge("switchyard_kv_blocks_used", "KV cache blocks in use (sequences and prefix cache).", gauges_.kv_blocks_used);
  gauge("switchyard_kv_blocks_total", "KV cache blocks in the pool.", gauges_.kv_blocks_total);
  gauge("switchyard_prefix_cache_blocks", "KV blocks held by the prefix cache.", gauges_.kv_blocks_cached);
  return out;
}

}  // namespace sy::serving
