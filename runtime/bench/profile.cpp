#include "bench/profile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace sy::bench {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Deterministic ids spread over the vocabulary (a prime stride), so embedding rows differ
// between positions as in a real prompt.
int32_t token_at(int64_t i, int64_t n_vocab) { return static_cast<int32_t>((1 + i * 7919) % n_vocab); }

struct StepTimes {
  double prefill_ms = 0, decode_ms = 0;
};

// One prefill and one decode step into a fresh sequence `seq`, removed again afterwards
// whatever happens.
Result<StepTimes> run_steps(engine::Engine& eng, int32_t seq, int64_t prompt_tokens, graph::OpProfile* prefill,
                            graph::OpProfile* decode) {
  std::vector<engine::BatchToken> batch;
  for (int64_t i = 0; i < prompt_tokens; ++i) batch.push_back({seq, token_at(i, eng.n_vocab()), i + 1 == prompt_tokens});
  const engine::BatchToken next{seq, token_at(prompt_tokens, eng.n_vocab()), true};
  std::vector<float> logits;
  if (auto st = eng.kv().add(seq); !st) return st;
  StepTimes t;
  Status st;
  eng.set_profile(prefill);
  auto t0 = std::chrono::steady_clock::now();
  st = eng.decode(batch, logits);
  t.prefill_ms = ms_since(t0);
  if (st) {
    eng.set_profile(decode);
    t0 = std::chrono::steady_clock::now();
    st = eng.decode({&next, 1}, logits);
    t.decode_ms = ms_since(t0);
  }
  eng.set_profile(nullptr);
  const Status removed = eng.kv().remove(seq);
  if (!st) return st;
  if (!removed) return removed;
  return t;
}

struct Row {
  const graph::OpProfileEntry* e;
  double ms, share;
};

std::vector<Row> sorted_rows(const graph::OpProfile& p, double step_ms) {
  std::vector<Row> rows;
  for (const auto& e : p.entries())
    rows.push_back({&e, static_cast<double>(e.ns) / 1e6, step_ms > 0 ? static_cast<double>(e.ns) / 1e6 / step_ms : 0});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.e->ns > b.e->ns; });
  return rows;
}

// Bytes per nanosecond are GB/s; negative when the op reads no weights.
double gb_per_s(const graph::OpProfileEntry& e) {
  return e.weight_bytes > 0 && e.ns > 0 ? static_cast<double>(e.weight_bytes) / static_cast<double>(e.ns) : -1;
}

// Flops per nanosecond are GFLOP/s; negative when the op is not a matmul.
double gflop_per_s(const graph::OpProfileEntry& e) {
  return e.flops > 0 && e.ns > 0 ? static_cast<double>(e.flops) / static_cast<double>(e.ns) : -1;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string table(const char* title, const graph::OpProfile& p, double step_ms, double plain_ms) {
  std::string s = std::string("### ") + title + ": " + fmt("%.1f", step_ms) + " ms profiled, " + fmt("%.1f", plain_ms) +
                  " ms unprofiled\n\n";
  s += "| op | type | device | nodes | ms | % of step | GB/s | GFLOP/s |\n|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const Row& r : sorted_rows(p, step_ms)) {
    const double bw = gb_per_s(*r.e), fl = gflop_per_s(*r.e);
    s += "| " + r.e->op + " | " + std::string(storage_type_name(r.e->type)) + " | " + r.e->device_name + " | " +
         std::to_string(r.e->nodes) + " | " + fmt("%.2f", r.ms) + " | " + fmt("%.1f", 100 * r.share) + " | " +
         (bw < 0 ? std::string("-") : fmt("%.1f", bw)) + " | " + (fl < 0 ? std::string("-") : fmt("%.1f", fl)) +
         " |\n";
  }
  const double outside = step_ms - static_cast<double>(p.total_ns()) / 1e6;
  s += "| (outside nodes: graph build, placement, host) | | | | " + fmt("%.2f", outside) + " | " +
       fmt("%.1f", step_ms > 0 ? 100 * outside / step_ms : 0) + " | - | - |\n";
  return s;
}

nlohmann::ordered_json step_json(const graph::OpProfile& p, int64_t tokens, double step_ms, double plain_ms) {
  nlohmann::ordered_json j;
  j["tokens"] = tokens;
  j["profiled_ms"] = step_ms;
  j["unprofiled_ms"] = plain_ms;
  j["node_ms"] = static_cast<double>(p.total_ns()) / 1e6;
  j["rows"] = nlohmann::ordered_json::array();
  for (const Row& r : sorted_rows(p, step_ms)) {
    nlohmann::ordered_json row;
    row["op"] = r.e->op;
    row["type"] = std::string(storage_type_name(r.e->type));
    row["device"] = r.e->device_name;
    row["nodes"] = r.e->nodes;
    row["ms"] = r.ms;
    row["share"] = r.share;
    row["weight_bytes"] = r.e->weight_bytes;
    const double bw = gb_per_s(*r.e);
    row["gb_per_s"] = bw < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(bw);
    row["flops"] = r.e->flops;
    const double fl = gflop_per_s(*r.e);
    row["gflop_per_s"] = fl < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(fl);
    j["rows"].push_back(std::move(row));
  }
  return j;
}

}  // namespace

Result<StepProfiles> profile_steps(engine::Engine& eng, int64_t prompt_tokens) {
  if (prompt_tokens < 1) return error::invalid_argument("--profile needs a prompt of at least 1 token (-p)");
  const int64_t n_ctx = eng.kv_cache().config().n_ctx;
  if (prompt_tokens + 1 > n_ctx)
    return error::out_of_range("--profile runs a " + std::to_string(prompt_tokens) +
                               "-token prompt and one decode step, which needs " + std::to_string(prompt_tokens + 1) +
                               " positions, but the context holds " + std::to_string(n_ctx) +
                               "; use a shorter -p or a longer context");
  int32_t seq = 0;  // a sequence id nobody uses
  while (eng.kv_cache().length(seq) >= 0) ++seq;
  StepProfiles p;
  p.prefill_tokens = prompt_tokens;
  // A warm-up first: the first steps also fault in the mapped weights and grow the arenas,
  // which neither measured run should pay.
  if (auto warm = run_steps(eng, seq, prompt_tokens, nullptr, nullptr); !warm) return warm.status();
  // The same steps unprofiled, so readers can see what per-node waiting costs.
  auto plain = run_steps(eng, seq, prompt_tokens, nullptr, nullptr);
  if (!plain) return plain.status();
  p.prefill_plain_ms = plain->prefill_ms;
  p.decode_plain_ms = plain->decode_ms;
  auto timed = run_steps(eng, seq, prompt_tokens, &p.prefill, &p.decode);
  if (!timed) return timed.status();
  p.prefill_ms = timed->prefill_ms;
  p.decode_ms = timed->decode_ms;
  return p;
}

std::string profile_markdown(const StepProfiles& p) {
  std::string s =
      "Per-op profile: every node runs alone and the host waits for its device after it, so the profiled "
      "step is slower than a normal one (its unprofiled time is beside it); read the shares, not the totals. "
      "GB/s: weight bytes read / time (matmul: the whole matrix; matmul_id: the experts chosen; get_rows: the "
      "rows looked up; transfer: bytes copied). GFLOP/s: 2 x multiply-adds / time, for matmul and matmul_id "
      "(what bounds prefill).\n\n";
  s += table(("Prefill of " + std::to_string(p.prefill_tokens) + " tokens").c_str(), p.prefill, p.prefill_ms,
             p.prefill_plain_ms);
  s += "\n";
  s += table("Decode step (1 token)", p.decode, p.decode_ms, p.decode_plain_ms);
  return s;
}

nlohmann::ordered_json profile_json(const StepProfiles& p) {
  nlohmann::ordered_json j;
  j["prefill"] = step_json(p.prefill, p.prefill_tokens, p.prefill_ms, p.prefill_plain_ms);
  j["decode"] = step_json(p.decode, 1, p.decode_ms, p.decode_plain_ms);
  return j;
}

}  // namespace sy::bench
