// What the serving layer counts, for /metrics (Prometheus text) and the closing figures of
// run: request outcomes, latency histograms and the gauges of one moment (slots busy, KV
// blocks used). Written by the engine thread, read by any: every member is guarded.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace sy::serving {

/// A cumulative histogram with fixed bucket bounds (seconds), as Prometheus expects.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double v);
  /// Appends NAME_bucket/_sum/_count lines.
  void render(const std::string& name, const std::string& help, std::string& out) const;
  [[nodiscard]] uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct Gauges {
  int64_t slots_busy = 0, slots_total = 0;
  int64_t waiting_interactive = 0, waiting_batch = 0;
  int64_t kv_blocks_used = 0, kv_blocks_total = 0, kv_blocks_cached = 0;
};

class Metrics {
 public:
  Metrics();
  /// A request ended with this outcome ("stop", "length", "cancelled", "error", ...).
  void finished(const std::string& outcome);
  /// The HTTP layer's answer to a request (200, 400, 429, ...).
  void http_status(int status);
  void queue_time(double s);
  void first_token(double s);
  void inter_token(double s);
  void tokens(int64_t prompt, int64_t generated, int64_t cached);
  void preempted();
  void step(double seconds, int64_t batch_tokens);
  void set_gauges(const Gauges& g);
  [[nodiscard]] Gauges gauges() const;
  /// The Prometheus text exposition of everything.
  [[nodiscard]] std::string render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> outcomes_;
  std::map<int, uint64_t> statuses_;
  Histogram queue_, ttft_, itl_;
  uint64_t prompt_tokens_ = 0, generated_tokens_ = 0, cached_tokens_ = 0, preemptions_ = 0, steps_ = 0;
  double busy_seconds_ = 0;  // engine time spent in steps
  Gauges gauges_;
};

}  // namespace sy::serving
