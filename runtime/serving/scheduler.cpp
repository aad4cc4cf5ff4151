#include "serving/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "engine/sampling.hpp"
#include "engine/stop.hpp"
#include "log/log.hpp"
#include "serving/json_constraint.hpp"
#include "serving/prefix_cache.hpp"

namespace sy::serving {

struct Scheduler::Seq {
  std::shared_ptr<Request> req;
  int32_t id = -1;                // KV sequence id while admitted
  std::vector<int32_t> tokens;    // prompt, then every accepted token
  int64_t n_prompt = 0;
  int64_t computed = 0;           // positions in the KV cache
  int64_t cached = 0;             // prompt positions the prefix cache supplied (first admission)
  int64_t order = 0;              // admission order: the newest is preempted first
  int64_t arrival = 0;            // arrival order, kept across preemption
  bool prompt_cached = false;     // the prompt's blocks were offered to the prefix cache
  bool ever_admitted = false;
  bool final_step = false;        // the next logits are only for on_logits (final_logits)
  std::optional<engine::SamplerChain> chain;
  std::optional<tok::StreamDecoder> stream;
  std::optional<engine::StopMatcher> stops;
  std::optional<JsonConstraint> json;
  std::vector<int32_t> generated;
  Clock::time_point last_token;

  [[nodiscard]] int64_t pending() const { return static_cast<int64_t>(tokens.size()) - computed; }
  [[nodiscard]] bool batch_class() const { return req->params.priority == Priority::batch; }
};

namespace {

std::shared_ptr<spdlog::logger> logger() { return log::get("serve"); }

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The fewest prompt tokens a step beside running streams takes (prefill_budget.hpp): small
// enough to stay near the step-time target on a CPU, large enough that a prompt advances.
// 32 held 8 streams of a dense 8B cut on two AVX2 cores (80 prompt tokens/s) for 400 ms a
// step, an inter-token p99 of 506 ms against llama-server's 347.
constexpr int64_t kMinPromptChunk = 8;

// The chosen token's log-probability under the model's distribution (raw logits), and the
// top n alternatives.
TokenLogprob logprob_of(std::span<const float> l, int32_t chosen, int top) {
  float mx = -INFINITY;
  for (float v : l) mx = std::max(mx, v);
  double sum = 0;
  for (float v : l) sum += std::exp(static_cast<double>(v - mx));
  const auto lse = static_cast<float>(static_cast<double>(mx) + std::log(sum));
  TokenLogprob r;
  r.id = chosen;
  r.logprob = l[static_cast<size_t>(chosen)] - lse;
  if (top > 0) {
    std::vector<int32_t> order(l.size());
    std::iota(order.begin(), order.end(), 0);
    const auto k = std::min<size_t>(static_cast<size_t>(top), order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), [&](int32_t a, int32_t b) {
      return l[static_cast<size_t>(a)] > l[static_cast<size_t>(b)] || (l[static_cast<size_t>(a)] == l[static_cast<size_t>(b)] && a < b);
    });
    for (size_t i = 0; i < k; ++i) r.top.emplace_back(order[i], l[static_cast<size_t>(order[i])] - lse);
  }
  return r;
}

}  // namespace

Scheduler::Scheduler(engine::Engine& engine, const tok::Tokenizer* tokenizer, registry::Registry& registry,
                     SchedulerConfig cfg, Metrics* metrics)
    : engine_(engine), tok_(tokenizer), reg_(registry), cfg_(cfg), metrics_(metrics),
      n_ctx_(engine.kv().config().n_ctx), prefill_budget_(cfg.max_step_s, kMinPromptChunk) {
  cfg_.slots = std::clamp<int64_t>(cfg_.slots, 1, engine.kv().config().n_seq_max);
  cfg_.batch_tokens = std::max<int64_t>(cfg_.batch_tokens, 1);
  const int64_t bs = engine.kv().config().block_size;
  cfg_.checkpoint_interval = std::max<int64_t>(bs, cfg_.checkpoint_interval / bs * bs);
  for (int32_t i = static_cast<int32_t>(cfg_.slots) - 1; i >= 0; --i) free_ids_.push_back(i);
  if (cfg_.prefix_cache) cache_ = std::make_unique<PrefixCache>(engine.kv(), engine.kv().config().n_state_checkpoints);
  if (tok_) {
    pieces_.reserve(static_cast<size_t>(tok_->n_vocab()));
    for (int32_t id = 0; id < tok_->n_vocab(); ++id) pieces_.push_back(tok_->piece(id));
  }
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lk(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { loop(); });
}

void Scheduler::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Whatever was still queued ends too (also when the thread never started).
  drain_incoming();
  for (auto* list : {&active_, &waiting_})
    for (auto& s : *list) finish(*s, "cancelled");
  active_.clear();
  waiting_.clear();
  cache_.reset();
}

void Scheduler::notify() { cv_.notify_all(); }

Status Scheduler::submit(std::shared_ptr<Request> r) {
  const auto n = static_cast<int64_t>(r->prompt.size());
  if (n == 0) return error::invalid_argument("the prompt is empty");
  if (n >= n_ctx_)
    return error::out_of_range("the prompt has " + std::to_string(n) + " tokens and the context holds " +
                               std::to_string(n_ctx_) + " (context.length), leaving no room to generate");
  r->timings.arrived = Clock::now();
  {
    std::lock_guard lk(mu_);
    if (stopping_) return error::unavailable("the server is shutting down");
    int64_t waiting = static_cast<int64_t>(incoming_.size()) + waiting_count_.load();
    if (waiting >= cfg_.max_waiting)
      return error::resource_exhausted(std::to_string(waiting) + " requests are waiting already (server.max_queue)");
    incoming_.push_back(std::move(r));
  }
  cv_.notify_all();
  return Status::ok();
}

void Scheduler::loop() {
  for (;;) {
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] {
        // With nothing running, a waiting request can always be admitted (or refused).
        return stopping_ || !incoming_.empty() || !active_.empty() || !waiting_.empty();
      });
      if (stopping_) return;
    }
    drain_incoming();
    reap();
    admit();
    if (!active_.empty()) step();
    update_gauges();
  }
}

void Scheduler::drain_incoming() {
  std::deque<std::shared_ptr<Request>> in;
  {
    std::lock_guard lk(mu_);
    in.swap(incoming_);
  }
  for (auto& r : in) {
    auto s = std::make_unique<Seq>();
    s->req = std::move(r);
    s->tokens = s->req->prompt;
    s->n_prompt = static_cast<int64_t>(s->tokens.size());
    s->arrival = order_++;
    auto chain = engine::SamplerChain::create(reg_, s->req->params.sampling, std::nullopt);
    if (!chain) {
      fail(*s, chain.status());
      continue;
    }
    s->chain.emplace(std::move(*chain));
    if (s->req->params.json_object) {
      if (!tok_) {
        fail(*s, error::invalid_argument("JSON output needs the model's tokenizer, and this model has none"));
        continue;
      }
      s->json.emplace(json_vocab());
    }
    if (tok_) s->stream.emplace(*tok_);
    s->stops.emplace(s->req->params.stop);
    waiting_.push_back(std::move(s));
  }
  // Interactive before batch, higher levels first, then first come first served.
  std::stable_sort(waiting_.begin(), waiting_.end(), [](const auto& a, const auto& b) {
    if (a->batch_class() != b->batch_class()) return !a->batch_class();
    if (a->req->params.priority_level != b->req->params.priority_level)
      return a->req->params.priority_level > b->req->params.priority_level;
    return a->arrival < b->arrival;
  });
  waiting_count_ = static_cast<int64_t>(waiting_.size());
}

void Scheduler::reap() {
  const auto now = Clock::now();
  for (auto* list : {&active_, &waiting_}) {
    for (auto& s : *list) {
      if (s->req->cancel.load()) {
        finish(*s, "cancelled");
      } else if (s->req->params.deadline && now >= *s->req->params.deadline) {
        fail(*s, error::unavailable("the request ran past its time limit (server.request_timeout) and was cancelled"));
      } else {
        continue;
      }
      s.reset();
    }
    list->erase(std::remove(list->begin(), list->end(), nullptr), list->end());
  }
  waiting_count_ = static_cast<int64_t>(waiting_.size());
}

void Scheduler::admit() {
  auto& kv = engine_.kv();
  const int64_t bs = kv.config().block_size;
  while (!waiting_.empty() && !free_ids_.empty()) {
    Seq& s = *waiting_.front();
    const int32_t id = free_ids_.back();
    if (auto st = kv.add(id); !st) {
      fail(s, st);
      waiting_.erase(waiting_.begin());
      continue;
    }
    // At least one position is left to feed, so the last one's logits come out.
    PrefixCache::Match m;
    if (cache_) m = cache_->lookup(s.tokens, static_cast<int64_t>(s.tokens.size()) - 1);
    Status st = Status::ok();
    if (!m.blocks.empty()) {
      st = kv.attach(id, m.blocks);
      if (st && m.state_slot >= 0) st = kv.load_state(m.state_slot, id);
    }
    // Blocks for the rest of what it holds now, plus the next token's.
    const int64_t need = (static_cast<int64_t>(s.tokens.size()) + bs) / bs - static_cast<int64_t>(m.blocks.size());
    const int64_t avail = cache_ ? cache_->make_room(need) : kv.free_blocks();
    if (!st || avail < need) {
      (void)kv.remove(id);
      if (!st) {
        fail(s, st);
        waiting_.erase(waiting_.begin());
        continue;
      }
      if (!active_.empty()) break;  // wait until running sequences free blocks
      fail(s, error::resource_exhausted("the KV cache pool (" + std::to_string(kv.total_blocks()) +
                                        " blocks) cannot hold this prompt; raise context.kv_tokens"));
      waiting_.erase(waiting_.begin());
      continue;
    }
    free_ids_.pop_back();
    s.id = id;
    s.computed = m.tokens(bs);
    s.order = order_++;
    if (!s.ever_admitted) {
      s.ever_admitted = true;
      s.cached = s.computed;
      s.req->timings.admitted = Clock::now();
      if (metrics_) metrics_->queue_time(seconds(s.req->timings.arrived, s.req->timings.admitted));
    }
    active_.push_back(std::move(waiting_.front()));
    waiting_.erase(waiting_.begin());
  }
  waiting_count_ = static_cast<int64_t>(waiting_.size());
}

bool Scheduler::is_checkpoint(const Seq& s, int64_t pos) const {
  if (!cache_ || !engine_.kv().has_state() || engine_.kv().config().n_state_checkpoints == 0 || pos <= 0) return false;
  const int64_t bs = engine_.kv().config().block_size;
  if (pos % cfg_.checkpoint_interval == 0) return true;
  // The last block boundary the prompt (as known now) reaches: where a follow-up turn resumes.
  return pos == (static_cast<int64_t>(s.tokens.size()) - 1) / bs * bs;
}

void Scheduler::build_batch() {
  batch_.clear();
  fed_.clear();
  int64_t budget = cfg_.batch_tokens;
  // Every generating sequence decodes one token; prompts fill what is left, oldest first,
  // as much of it as the step-time bound allows while streams wait for this step.
  for (auto& s : active_) {
    if (budget == 0) break;
    if (s->pending() != 1) continue;
    batch_.push_back({s->id, s->tokens[static_cast<size_t>(s->computed)], true});
    fed_.push_back({s.get(), 1, true});
    --budget;
  }
  step_decode_ = static_cast<int64_t>(batch_.size());
  budget = prefill_budget_.cap(step_decode_, budget);
  for (auto& s : active_) {
    if (budget == 0) break;
    if (s->pending() <= 1) continue;
    int64_t n = std::min(s->pending(), budget);
    // A hybrid model's chunk ends at the next checkpoint, so the state there can be saved.
    for (int64_t p = s->computed + 1; p < s->computed + n; ++p)
      if (is_checkpoint(*s, p)) {
        n = p - s->computed;
        break;
      }
    const bool last = s->computed + n == static_cast<int64_t>(s->tokens.size());
    for (int64_t i = 0; i < n; ++i)
      batch_.push_back({s->id, s->tokens[static_cast<size_t>(s->computed + i)], last && i == n - 1});
    fed_.push_back({s.get(), n, last});
    budget -= n;
  }
  step_prompt_ = static_cast<int64_t>(batch_.size()) - step_decode_;
}

void Scheduler::preempt_newest() {
  // Batch requests go first; among a class, the newest admitted.
  auto victim = std::max_element(active_.begin(), active_.end(), [](const auto& a, const auto& b) {
    if (a->batch_class() != b->batch_class()) return !a->batch_class();
    return a->order < b->order;
  });
  Seq& s = **victim;
  logger()->debug("preempting sequence {} ({} positions) for KV blocks", s.id, s.computed);
  release(s, true);
  s.computed = 0;
  ++s.req->timings.preemptions;
  if (metrics_) metrics_->preempted();
  hold_admission_ = true;
  // Back to the front of its class: it was admitted before anything still waiting.
  waiting_.insert(waiting_.begin(), std::move(*victim));
  active_.erase(victim);
  waiting_count_ = static_cast<int64_t>(waiting_.size());
}

bool Scheduler::step() {
  for (;;) {
    build_batch();
    if (batch_.empty()) return false;
    const auto t0 = Clock::now();
    const Status st = engine_.decode(batch_, logits_);
    if (st) {
      const double took = seconds(t0, Clock::now());
      prefill_budget_.observe(step_decode_, step_prompt_, took);
      if (metrics_) metrics_->step(took, static_cast<int64_t>(batch_.size()));
      after_step(logits_);
      return true;
    }
    if (st.code() == StatusCode::exhausted) {
      // Out of blocks: first what only the prefix cache holds, then the newest sequence.
      const int64_t bs = engine_.kv().config().block_size;
      int64_t need = 0;
      for (const auto& f : fed_) need += (f.seq->computed + f.n + bs - 1) / bs - (f.seq->computed + bs - 1) / bs + 1;
      if (cache_ && cache_->evictable() > 0 && cache_->make_room(need) >= need) continue;
      if (active_.size() > 1) {
        preempt_newest();
        continue;
      }
    }
    // The step failed for another reason: every sequence in it ends with the error.
    logger()->error("engine step failed: {}", st.message());
    for (auto& f : fed_) fail(*f.seq, st);
    active_.erase(std::remove_if(active_.begin(), active_.end(), [](const auto& s) { return s->id < 0; }), active_.end());
    return false;
  }
}

void Scheduler::after_step(std::span<const float> logits) {
  const auto nv = static_cast<size_t>(engine_.n_vocab());
  size_t out = 0;
  for (auto& f : fed_) {
    Seq& s = *f.seq;
    s.computed += f.n;
    if (is_checkpoint(s, s.computed)) save_checkpoint(s);
    if (cache_ && !s.prompt_cached && s.computed >= s.n_prompt) {
      // The prompt's full blocks are shared from now on, also while this sequence runs.
      cache_->insert(s.tokens, engine_.kv().blocks(s.id), s.computed);
      s.prompt_cached = true;
    }
    if (f.logits) on_token(s, logits.subspan(out * nv, nv));
    out += f.logits ? 1 : 0;
  }
  // Finished sequences were released in on_token; drop them.
  active_.erase(std::remove_if(active_.begin(), active_.end(), [](const auto& s) { return s->id < 0; }), active_.end());
}

void Scheduler::save_checkpoint(Seq& s) {
  const int64_t slot = cache_->take_checkpoint_slot();
  if (slot < 0) return;
  if (auto st = engine_.kv().save_state(s.id, slot); !st) {
    logger()->warn("saving a recurrent-state checkpoint failed: {}", st.message());
    cache_->checkpoint_saved({}, 0, slot);
    return;
  }
  cache_->checkpoint_saved(s.tokens, s.computed, slot);
}

void Scheduler::on_token(Seq& s, std::span<const float> logits) {
  Request& r = *s.req;
  const auto& p = r.params;
  if (r.on_logits) r.on_logits(s.computed - 1, logits);
  if (s.final_step) return finish(s, "length");
  SamplerContext ctx{std::span<const int32_t>(s.tokens.data(), static_cast<size_t>(s.n_prompt)), s.generated, pieces_};
  std::span<const float> choose_from = logits;
  if (s.json) {
    // Only tokens that keep the output a JSON object's prefix stay candidates.
    masked_.assign(logits.begin(), logits.end());
    s.json->mask(masked_);
    choose_from = masked_;
  }
  auto tok = s.chain->sample(choose_from, ctx);
  if (!tok) return fail(s, tok.status());
  const bool forcing = !p.force_ids.empty();
  const int32_t next = forcing ? p.force_ids[std::min(s.generated.size(), p.force_ids.size() - 1)] : *tok;
  const auto now = Clock::now();
  if (s.generated.empty()) {
    r.timings.first_token = now;
    if (metrics_) metrics_->first_token(seconds(r.timings.arrived, now));
  } else if (metrics_) {
    metrics_->inter_token(seconds(s.last_token, now));
  }
  s.last_token = now;
  if (!forcing && !p.ignore_eos && tok_ && tok_->is_end_of_generation(next)) return finish(s, "eos");
  s.chain->accept(next);
  if (s.json) (void)s.json->accept(next);
  s.tokens.push_back(next);
  s.generated.push_back(next);
  Event e;
  e.kind = Event::Kind::text;
  e.tokens = {next};
  if (p.top_logprobs >= 0) e.logprobs.push_back(logprob_of(logits, next, p.top_logprobs));
  if (forcing) e.sampled = *tok;
  if (s.stream) e.text = s.stops->push(s.stream->push(next));
  const bool stopped = s.stops->stopped();
  r.sink(std::move(e));
  if (stopped) return finish(s, "stop");
  if (p.max_tokens >= 0 && static_cast<int64_t>(s.generated.size()) >= p.max_tokens) {
    // One more step for the logits after the last token, when they are wanted and fit.
    if (p.final_logits && r.on_logits && static_cast<int64_t>(s.tokens.size()) <= n_ctx_) {
      s.final_step = true;
      return;
    }
    return finish(s, "length");
  }
  // The last token that fits is sampled, never stored.
  if (static_cast<int64_t>(s.tokens.size()) > n_ctx_) return finish(s, "context");
}

void Scheduler::release(Seq& s, bool cache_blocks) {
  if (s.id < 0) return;
  auto& kv = engine_.kv();
  if (cache_ && cache_blocks && s.computed > 0) cache_->insert(s.tokens, kv.blocks(s.id), s.computed);
  (void)kv.remove(s.id);
  free_ids_.push_back(s.id);
  s.id = -1;
}

void Scheduler::finish(Seq& s, const std::string& reason) {
  Request& r = *s.req;
  if (s.stream && s.stops && !s.stops->stopped()) {
    std::string tail = s.stops->push(s.stream->flush());
    if (!s.stops->stopped()) tail += s.stops->flush();
    if (!tail.empty()) {
      Event e;
      e.kind = Event::Kind::text;
      e.text = std::move(tail);
      r.sink(std::move(e));
    }
  }
  release(s, true);
  hold_admission_ = false;
  r.timings.finished = Clock::now();
  Event done;
  done.kind = Event::Kind::done;
  done.finish_reason = reason;
  done.usage = {s.n_prompt, static_cast<int64_t>(s.generated.size()), s.cached};
  if (metrics_) {
    metrics_->finished(reason);
    metrics_->tokens(s.n_prompt, done.usage.completion_tokens, s.cached);
  }
  r.sink(std::move(done));
}

void Scheduler::fail(Seq& s, const Status& why) {
  Request& r = *s.req;
  release(s, false);
  hold_admission_ = false;
  r.timings.finished = Clock::now();
  Event e;
  e.kind = Event::Kind::error;
  e.error = why;
  e.usage = {s.n_prompt, static_cast<int64_t>(s.generated.size()), s.cached};
  if (metrics_) metrics_->finished("error");
  r.sink(std::move(e));
}

std::shared_ptr<const JsonVocab> Scheduler::json_vocab() {
  // Built once, on the first request that asks (tens of milliseconds for a large vocabulary).
  if (!json_vocab_) {
    std::vector<std::string> bytes(static_cast<size_t>(tok_->n_vocab()));
    std::vector<uint8_t> special(bytes.size());
    std::vector<int32_t> ends;
    for (int32_t id = 0; id < tok_->n_vocab(); ++id) {
      bytes[static_cast<size_t>(id)] = tok_->piece(id);
      special[static_cast<size_t>(id)] = tok_->is_control(id) ? 1 : 0;
      if (tok_->is_end_of_generation(id)) ends.push_back(id);
    }
    json_vocab_ = std::make_shared<const JsonVocab>(bytes, special, ends);
  }
  return json_vocab_;
}

void Scheduler::update_gauges() {
  if (!metrics_) return;
  const auto& kv = engine_.kv();
  Gauges g;
  g.slots_busy = static_cast<int64_t>(active_.size());
  g.slots_total = cfg_.slots;
  for (const auto& s : waiting_) (s->batch_class() ? g.waiting_batch : g.waiting_interactive)++;
  g.kv_blocks_total = kv.total_blocks();
  g.kv_blocks_used = kv.total_blocks() - kv.free_blocks();
  g.kv_blocks_cached = cache_ ? cache_->cached_blocks() : 0;
  metrics_->set_gauges(g);
}

}  // namespace sy::serving
