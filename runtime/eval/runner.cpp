#include "eval/runner.hpp"

#include <algorithm>
#include <chrono>

#include "chat/template.hpp"
#include "engine/runtime_setup.hpp"
#include "pipeline/diagnostics.hpp"
#include "pipeline/load.hpp"
#include "quality/log_probs.hpp"
#include "quality/logit_file.hpp"
#include "serving/local_session.hpp"

namespace sy::eval {
namespace eval_run {

using Chain = std::vector<pipeline::ComponentConfig>;

Result<pipeline::Pipeline> load(const PipelineEntry& e, const std::string& sampling) {
  pipeline::LoadOptions o;
  o.sets = e.sets;
  if (!sampling.empty()) o.sets.push_back("sampling=" + sampling);
  auto r = pipeline::load_pipeline_file(e.file, o);
  if (!r.ok()) {
    std::string msg = "pipeline '" + e.name + "' (" + e.file.string() + "):";
    for (const auto& d : r.diagnostics)
      if (!d.warning) msg += "\n  " + pipeline::format_diagnostic(d);
    return error::invalid_argument(msg);
  }
  return std::move(r.pipeline);
}

// The chain with every sampler that takes a seed seeded with `seed`.
Chain seeded(Chain chain, const registry::Registry& reg, int64_t seed) {
  for (auto& c : chain) {
    const auto* rec = reg.find(ComponentKind::sampler, c.name);
    if (rec && reg.manifest(*rec).param("seed")) c.params.set("seed", seed);
  }
  return chain;
}

struct Generated {
  std::vector<int32_t> tokens;
  std::string text;
  double prompt_s = 0, gen_s = 0;
};

Result<Generated> generate(serving::LocalSession& session, const std::vector<int32_t>& prompt, int64_t max_tokens,
                           const Chain& chain, const std::vector<int32_t>& force, std::vector<float>* logits) {
  auto req = std::make_shared<serving::Request>();
  req->prompt = prompt;
  req->params.max_tokens = max_tokens;
  req->params.sampling = chain;
  req->params.force_ids = force;
  if (logits) req->on_logits = [logits](int64_t, std::span<const float> l) { logits->insert(logits->end(), l.begin(), l.end()); };
  Generated g;
  Status failed;
  auto st = session.generate(req, [&](const serving::Event& e) {
    if (e.kind == serving::Event::Kind::text) {
      g.tokens.insert(g.tokens.end(), e.tokens.begin(), e.tokens.end());
      g.text += e.text;
    } else if (e.kind == serving::Event::Kind::error) {
      failed = e.error;
    }
  });
  if (!st) return st;
  if (!failed) return failed;
  const auto& t = req->timings;
  if (t.first_token > t.admitted) g.prompt_s = std::chrono::duration<double>(t.first_token - t.admitted).count();
  if (t.finished > t.first_token) g.gen_s = std::chrono::duration<double>(t.finished - t.first_token).count();
  return g;
}

Result<std::vector<int32_t>> tokenize(const Prompt& p, const engine::Runtime& rt, const pipeline::Pipeline& pl) {
  const tok::Tokenizer& tk = *rt.tokenizer;
  if (!p.chat()) return tk.encode(p.text, true, true);
  auto tmpl = chat::find_chat_template({}, pl.model.chat_template, pl.model.tokenizer, rt.model->metadata());
  if (!tmpl) return tmpl.status();
  auto parsed = chat::Template::parse(tmpl->first, tmpl->second);
  if (!parsed) return Status(parsed.status().code(), "chat template: " + parsed.status().message());
  auto text = chat::render_chat(*parsed, p.messages, true, &tk);
  if (!text) return Status(text.status().code(), "chat template: " + text.status().message());
  return chat::tokenize_chat(tk, *text);
}

// What the reference leaves for the others: its greedy outputs, its distributions on them
// (encoded records, one block per prompt) and its sampled runs.
struct Reference {
  int32_t n_vocab = 0;
  std::vector<PromptOutcome> outcomes;
  std::vector<std::vector<uint16_t>> records;
};

Status run_one(const EvalSpec& spec, const PipelineEntry& e, const std::vector<Prompt>& prompts, Reference& ref,
               PipelineResult& out, const Log& log) {
  const bool is_ref = e.name == spec.reference;
  auto p = load(e, {});
  if (!p) return p.status();
  auto rt = engine::bring_up(*p);
  if (!rt) return Status(rt.status().code(), "pipeline '" + e.name + "': " + rt.status().message());
  engine::Runtime& r = **rt;
  if (!r.tokenizer)
    return error::invalid_argument("pipeline '" + e.name + "': the prompts are text and this model has no tokenizer (" +
                                   r.tokenizer_note + "); set model.tokenizer");
  const int32_t n_vocab = static_cast<int32_t>(r.engine->n_vocab());
  if (is_ref) ref.n_vocab = n_vocab;
  else if (n_vocab != ref.n_vocab)
    return error::invalid_argument("pipeline '" + e.name + "' has a vocabulary of " + std::to_string(n_vocab) +
                                   " tokens and the reference '" + spec.reference + "' " + std::to_string(ref.n_vocab) +
                                   "; an eval compares pipelines of one model (or models sharing a vocabulary)");
  Chain sampled_chain = p->sampling;
  if (!spec.sampling.empty()) {
    auto ps = load(e, spec.sampling);
    if (!ps) return ps.status();
    sampled_chain = ps->sampling;
  }
  const Chain greedy{pipeline::ComponentConfig{"greedy", {}, {}, false}};

  serving::SchedulerConfig sc;
  sc.batch_tokens = p->context.batch;
  sc.prefix_cache = false;
  serving::LocalSession session(*r.engine, r.tokenizer.get(), *r.registry, sc);
  quality::KldAccumulator acc;
  const size_t words = quality::record_words(n_vocab);
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (log) log(e.name + ": prompt " + std::to_string(i + 1) + "/" + std::to_string(prompts.size()) + " (" + prompts[i].id + ")");
    auto ids = tokenize(prompts[i], r, *p);
    if (!ids) return Status(ids.status().code(), "pipeline '" + e.name + "', prompt " + prompts[i].id + ": " + ids.status().message());
    const int64_t n_ctx = r.engine->kv().config().n_ctx;
    if (static_cast<int64_t>(ids->size()) + spec.max_tokens > n_ctx)
      return error::invalid_argument("pipeline '" + e.name + "', prompt " + prompts[i].id + ": its " +
                                     std::to_string(ids->size()) + " tokens and max_tokens " + std::to_string(spec.max_tokens) +
                                     " do not fit the context of " + std::to_string(n_ctx) +
                                     " (context.length); raise it (set: [ context.length=N ]) or lower max_tokens");
    PromptOutcome o;
    auto g = generate(session, *ids, spec.max_tokens, greedy, {}, nullptr);
    if (!g) return Status(g.status().code(), "pipeline '" + e.name + "', prompt " + prompts[i].id + ": " + g.status().message());
    o.greedy = g->tokens;
    o.greedy_text = g->text;
    out.prompt_tokens += static_cast<int64_t>(ids->size());
    out.generated_tokens += static_cast<int64_t>(g->tokens.size());
    out.prompt_seconds += g->prompt_s;
    out.generation_seconds += g->gen_s;
    if (is_ref) ref.outcomes.push_back(o);

    // Teacher-forced on the reference's greedy output: one row of logits per forced token.
    const auto& forced = ref.outcomes[i].greedy;
    if (!forced.empty()) {
      std::vector<float> rows;
      auto f = generate(session, *ids, static_cast<int64_t>(forced.size()), greedy, forced, &rows);
      if (!f) return f.status();
      if (rows.size() != forced.size() * static_cast<size_t>(n_vocab))
        return error::internal("teacher forcing gave " + std::to_string(rows.size() / static_cast<size_t>(n_vocab)) +
                               " rows for " + std::to_string(forced.size()) + " tokens");
      if (is_ref) ref.records.emplace_back(words * forced.size());
      const auto& rec = ref.records[i];
      for (size_t k = 0; k < forced.size(); ++k) {
        const std::span<const float> row(rows.data() + k * static_cast<size_t>(n_vocab), static_cast<size_t>(n_vocab));
        const auto s = quality::row_softmax(row);
        if (is_ref)
          quality::encode_record(row, s, std::span<uint16_t>(ref.records[i].data() + k * words, words));
        acc.add(row, s, quality::view_record(std::span<const uint16_t>(rec.data() + k * words, words), n_vocab), forced[k]);
      }
    } else if (is_ref) {
      ref.records.emplace_back();
    }

    for (int64_t run = 0; run < spec.runs; ++run) {
      auto s = generate(session, *ids, spec.max_tokens, seeded(sampled_chain, *r.registry, spec.seed + run), {}, nullptr);
      if (!s) return s.status();
      o.sampled.push_back(s->tokens);
    }
    if (is_ref) ref.outcomes[i].sampled = o.sampled;
    out.prompts.push_back(std::move(o));
  }
  out.kld = acc.summary();
  out.scored_tokens = out.kld.count;
  score_outcomes(out.prompts, ref.outcomes, spec.runs, out);
  return Status::ok();
}

}  // namespace eval_run

void score_outcomes(const std::vector<PromptOutcome>& mine, const std::vector<PromptOutcome>& reference, int64_t runs,
                    PipelineResult& r) {
  const size_t n = std::min(mine.size(), reference.size());
  if (n == 0) return;
  int64_t exact = 0, seeded = 0, seeded_total = 0;
  double prefix = 0, consistency = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& a = mine[i].greedy;
    const auto& b = reference[i].greedy;
    exact += a == b;
    const auto diff = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    prefix += static_cast<double>(diff.first - a.begin());
    const size_t k = std::min(mine[i].sampled.size(), reference[i].sampled.size());
    for (size_t j = 0; j < k; ++j) seeded += mine[i].sampled[j] == reference[i].sampled[j];
    seeded_total += static_cast<int64_t>(k);
    const auto& s = mine[i].sampled;
    int64_t pairs = 0, same = 0;
    for (size_t x = 0; x < s.size(); ++x)
      for (size_t y = x + 1; y < s.size(); ++y) ++pairs, same += s[x] == s[y];
    if (pairs > 0) consistency += static_cast<double>(same) / static_cast<double>(pairs);
  }
  r.exact_match = static_cast<double>(exact) / static_cast<double>(n);
  r.common_prefix = prefix / static_cast<double>(n);
  r.seeded_agreement = seeded_total > 0 ? static_cast<double>(seeded) / static_cast<double>(seeded_total) : -1;
  r.consistency = runs >= 2 ? consistency / static_cast<double>(n) : -1;
}

Result<std::vector<PipelineResult>> run_eval(const EvalSpec& spec, const std::vector<Prompt>& prompts, const Log& log) {
  // The reference runs first: the others are scored against what it leaves.
  std::vector<const PipelineEntry*> order;
  for (const auto& e : spec.pipelines)
    if (e.name == spec.reference) order.insert(order.begin(), &e);
    else order.push_back(&e);
  eval_run::Reference ref;
  std::vector<PipelineResult> results(spec.pipelines.size());
  for (const PipelineEntry* e : order) {
    const auto at = static_cast<size_t>(e - spec.pipelines.data());
    PipelineResult& r = results[at];
    r.name = e->name;
    r.reference = e->name == spec.reference;
    if (auto st = eval_run::run_one(spec, *e, prompts, ref, r, log); !st) return st;
  }
  return results;
}

}  // namespace sy::eval
