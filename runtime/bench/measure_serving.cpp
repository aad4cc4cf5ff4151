// bench's serving path: a row measured through the scheduler `run` and `serve` use, so the
// figures bench prints are the ones users get (issue 37: `run` was once 2x slower than the
// engine-only bench on the same file, and nothing showed it).
#include <chrono>

#include "bench/measure.hpp"
#include "bench/token_ids.hpp"
#include "serving/local_session.hpp"

namespace sy::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

class ServingRunner {
 public:
  ServingRunner(engine::Runtime& rt, const pipeline::Pipeline& p)
      : session_(*rt.engine, rt.tokenizer.get(), *rt.registry, config(p)), sampling_(p.sampling),
        ids_{.n_vocab = rt.engine->n_vocab()} {}

  // One request: `prompt` fresh ids, then `gen` tokens, each step fed a fresh id (teacher
  // forcing; the sampler chain still runs, as it does for every user's token). Its timings
  // once it is done.
  Result<serving::Timings> request(int64_t prompt, int64_t gen) {
    auto req = std::make_shared<serving::Request>();
    for (int64_t i = 0; i < prompt; ++i) req->prompt.push_back(ids_.next());
    for (int64_t i = 0; i < gen; ++i) req->params.force_ids.push_back(ids_.next());
    req->params.max_tokens = gen;
    req->params.ignore_eos = true;
    req->params.sampling = sampling_;
    Status failed;
    std::string reason;
    int64_t produced = 0;
    const Status st = session_.generate(req, [&](const serving::Event& e) {
      if (e.kind == serving::Event::Kind::error) failed = e.error;
      if (e.kind == serving::Event::Kind::done) {
        reason = e.finish_reason;
        produced = e.usage.completion_tokens;
      }
    });
    if (!st) return st;
    if (!failed) return failed;
    if (produced != gen)
      return error::internal("the serving path stopped after " + std::to_string(produced) + " of " + std::to_string(gen) +
                             " tokens (" + reason + ")");
    return req->timings;
  }

 private:
  static serving::SchedulerConfig config(const pipeline::Pipeline& p) {
    serving::SchedulerConfig sc;
    sc.batch_tokens = p.context.batch;
    sc.prefix_cache = false;  // as `run`: every repetition computes its whole prompt
    return sc;
  }

  serving::LocalSession session_;
  std::vector<pipeline::ComponentConfig> sampling_;
  TokenIds ids_;
};

}  // namespace

Result<nlohmann::ordered_json> measure_row_serving(const pipeline::Pipeline& p, const RowSpec& row) {
  if (row.depth > 0) return measure_row(p, row);
  const auto t_load = Clock::now();
  auto rt = engine::bring_up(p);
  if (!rt) return rt.status();
  const double load_ms = ms_between(t_load, Clock::now());
  double prompt_ms = 0, gen_ms = 0;
  {
    ServingRunner r(**rt, p);
    // Warmup, as llama-bench's: a prefill of p tokens and one decode step.
    if (auto w = r.request(std::max<int64_t>(row.prompt, 1), 1); !w) return w.status();
    if (row.prompt > 0) {
      auto t = r.request(row.prompt, 1);
      if (!t) return t.status();
      prompt_ms = ms_between(t->admitted, t->first_token);
    }
    if (row.gen > 0) {
      // The first of the n steps computes the one-id prompt, which gives the first token.
      auto t = r.request(1, row.gen);
      if (!t) return t.status();
      gen_ms = ms_between(t->admitted, t->finished);
    }
  }
  auto j = row_info(**rt, p, row);
  if (!j) return j.status();
  (*j)["path"] = "serve";
  (*j)["load_ms"] = load_ms;
  (*j)["prompt_ms"] = prompt_ms;
  (*j)["ttft_ms"] = prompt_ms;  // the first token is sampled within the request
  (*j)["gen_ms"] = gen_ms;
  return j;
}

}  // namespace sy::bench
