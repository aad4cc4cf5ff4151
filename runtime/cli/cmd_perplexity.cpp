// switchyard perplexity: llama-perplexity's measurement (chunks of -c tokens, the second half
// of each scored, -b tokens per decode, --chunks) on any pipeline. --save-logits FILE keeps
// the run's distributions as a reference; --kl-divergence FILE compares a run against one
// (the file's tokens, not a text) and reports KL divergence, top-1 agreement, Δp and the
// perplexity ratio. The reference file is llama.cpp's format, so references made by either
// tool serve both. docs/quality.md has the details.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/list_devices.hpp"
#include "cli/llama_flags.hpp"
#include "cli/number_arg.hpp"
#include "engine/runtime_setup.hpp"
#include "pipeline/emit.hpp"
#include "quality/kld.hpp"
#include "quality/logit_file.hpp"
#include "quality/perplexity.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
// A named namespace: unity builds put this file beside others with their own fail().
namespace perplexity_cmd {

struct PerplexityArgs {
  PipelineFlags flags;
  std::string text_file;
  int64_t chunks = -1;
  std::string save_logits;  // --save-logits / llama.cpp's --kl-divergence-base
  std::string kl_file;      // --kl-divergence FILE
  bool kl_flag = false;     // llama.cpp's bare --kl-divergence (the file is --kl-divergence-base)
  bool json = false;
};

int fail(const std::string& msg) {
  std::cerr << "switchyard perplexity: " << msg << "\n";
  return 1;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

nlohmann::json kld_json(const quality::KldSummary& s) {
  return {{"ppl", s.ppl.mean},
          {"ppl_error", s.ppl.error},
          {"ppl_base", s.ppl_base.mean},
          {"ppl_base_error", s.ppl_base.error},
          {"ppl_ratio", s.ppl_ratio},
          {"ppl_diff", s.ppl_diff},
          {"ln_ppl_ratio", s.ln_ratio.mean},
          {"kld_mean", s.kld.mean},
          {"kld_mean_error", s.kld.error},
          {"kld_median", s.kld_median},
          {"kld_p99", s.kld_p99},
          {"kld_p999", s.kld_p999},
          {"kld_max", s.kld_max},
          {"same_top", s.same_top},
          {"p_diff_mean", s.p_diff.mean},
          {"p_diff_rms", s.p_diff_rms},
          {"p_diff_max_abs", s.p_diff_max_abs},
          {"positions", s.count}};
}

int run_perplexity(PerplexityArgs a) {
  if (a.flags.list_devices) return list_devices(std::cout);
  if (a.flags.parallel)
    return fail("-np " + *a.flags.parallel + ": perplexity runs -b / -c chunks at once as its sequences; set -b instead");
  const bool compare = !a.kl_file.empty() || a.kl_flag;
  if (a.kl_flag && a.kl_file.empty()) {
    if (a.save_logits.empty()) return fail("--kl-divergence needs the reference file: --kl-divergence FILE");
    a.kl_file = a.save_logits;  // llama.cpp's spelling: --kl-divergence-base FILE --kl-divergence
    a.save_logits.clear();
  }
  if (compare && !a.save_logits.empty())
    return fail("give --save-logits (write a reference) or --kl-divergence (compare with one), not both");
  if (!compare && a.text_file.empty()) return fail("name the text to score with -f FILE");
  if (compare && !a.text_file.empty())
    std::cerr << "switchyard perplexity: note: -f is ignored with --kl-divergence; the reference file holds the tokens\n";
  if (!a.save_logits.empty())
    if (auto st = util::check_output_path(a.save_logits, "--save-logits"); !st) return fail(st.message());

  // The chunk size and batch: -c and -b as llama-perplexity reads them (512 and 2048); with
  // a reference, its chunk size.
  auto batch = token_count_flag(a.flags.batch, "-b", 2048, 1);
  if (!batch) return fail(batch.status().message());
  std::optional<quality::LogitFileReader> ref;
  int64_t n_ctx = 512;
  if (compare) {
    auto r = quality::LogitFileReader::open(a.kl_file);
    if (!r) return fail(r.status().message());
    ref.emplace(std::move(r.value()));
    n_ctx = ref->header().n_ctx;
    if (a.flags.ctx && *a.flags.ctx != std::to_string(n_ctx))
      return fail("-c " + *a.flags.ctx + ": " + a.kl_file + " was computed with chunks of " + std::to_string(n_ctx) +
                  " tokens; drop -c or give -c " + std::to_string(n_ctx));
  } else {
    auto c = token_count_flag(a.flags.ctx, "-c", 512, 4);
    if (!c) return fail(c.status().message());
    n_ctx = *c;
  }
  int64_t eff_batch = 0;
  PipelineFlags f = chunked_flags(a.flags, n_ctx, *batch, eff_batch);
  auto p = load_with_flags("perplexity", f);
  if (!p) return 1;
  if (a.flags.print_pipeline) {
    std::cout << pipeline::to_yaml(*p);
    return 0;
  }
  auto rt = engine::bring_up(*p);
  if (!rt) return fail(rt.status().message());
  engine::Engine& eng = *(*rt)->engine;
  const tok::Tokenizer* tk = (*rt)->tokenizer.get();

  std::vector<int32_t> tokens;
  int32_t bos = -1;
  if (tk && tk->adds_bos()) bos = tk->bos();
  if (compare) {
    const auto& h = ref->header();
    if (h.n_vocab != eng.n_vocab())
      return fail(a.kl_file + " holds distributions over " + std::to_string(h.n_vocab) + " tokens, but " +
                  p->model.path.string() + " has a vocabulary of " + std::to_string(eng.n_vocab()) +
                  "; compare models that share a tokenizer");
    tokens = h.tokens;
  } else {
    if (!tk) return fail("scoring a text needs the model's tokenizer, and it has none (" + (*rt)->tokenizer_note + ")");
    auto text = util::read_file(a.text_file, "-f");
    if (!text) return fail(text.status().message());
    const auto t0 = std::chrono::steady_clock::now();
    tokens = tk->encode(*text, true, false);
    std::cerr << "perplexity: tokenized " << a.text_file << " into " << tokens.size() << " tokens in "
              << fixed(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), 1)
              << " ms\n";
  }
  auto plan = quality::plan_chunks(static_cast<int64_t>(tokens.size()), n_ctx, a.chunks, eff_batch);
  if (!plan) return fail(plan.status().message());
  std::cerr << "perplexity: " << plan->chunks << " chunks, n_ctx=" << n_ctx << ", batch_size=" << eff_batch
            << ", n_seq=" << plan->n_seq << ", scoring " << plan->scored() << " tokens per chunk\n";

  std::optional<quality::LogitFileWriter> writer;
  const size_t words = quality::record_words(static_cast<int32_t>(eng.n_vocab()));
  std::vector<uint16_t> records;
  if (!a.save_logits.empty()) {
    quality::LogitFileHeader h;
    h.n_ctx = static_cast<uint32_t>(n_ctx);
    h.n_vocab = static_cast<int32_t>(eng.n_vocab());
    h.n_chunk = static_cast<int32_t>(plan->chunks);
    h.tokens.assign(tokens.begin(), tokens.begin() + plan->chunks * n_ctx);
    auto w = quality::LogitFileWriter::create(a.save_logits, h);
    if (!w) return fail(w.status().message());
    writer.emplace(std::move(w.value()));
    records.resize(static_cast<size_t>(plan->scored()) * words);
  }

  quality::NllSums nll;
  quality::KldAccumulator kld;
  const auto n_vocab = static_cast<size_t>(eng.n_vocab());
  const auto start = std::chrono::steady_clock::now();
  if (compare && !a.json) std::cout << quality::kld_chunk_header();
  const auto on_chunk = [&](int64_t chunk, std::span<const int32_t> toks, std::span<const float> logits) -> Status {
    if (compare)
      if (auto st = ref->read_chunk(records); !st) return st;
    for (int64_t i = 0; i < plan->scored(); ++i) {
      const auto row = logits.subspan(static_cast<size_t>(i) * n_vocab, n_vocab);
      const int64_t pos = plan->first() + i;
      const int32_t target = toks[static_cast<size_t>(pos + 1)];
      const quality::RowSoftmax s = quality::row_softmax(row);
      nll.add(-s.log_prob(row[static_cast<size_t>(target)]));
      if (!writer && !compare) continue;
      const auto rec = std::span<uint16_t>(records).subspan(static_cast<size_t>(i) * words, words);
      if (writer) quality::encode_record(row, s, rec);
      if (compare) kld.add(row, s, quality::view_record(rec, static_cast<int32_t>(n_vocab)), target);
    }
    if (writer)
      if (auto st = writer->write_chunk(records); !st) return st;
    if (chunk == 0) {  // the first pass is evaluated: its time predicts the rest
      const double pass = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double passes = static_cast<double>((plan->chunks + plan->n_seq - 1) / plan->n_seq);
      std::cerr << "perplexity: " << fixed(pass, 2) << " seconds per pass - ETA " << fixed(pass * passes / 60.0, 2)
                << " minutes\n";
    }
    if (!a.json) {
      if (compare)
        std::cout << quality::kld_chunk_line(chunk + 1, kld.summary());
      else
        std::cout << "[" << chunk + 1 << "]" << fixed(nll.perplexity(), 4) << "," << std::flush;
    }
    return {};
  };
  if (auto st = quality::evaluate_chunks(eng, tokens, *plan, bos, on_chunk); !st) return fail(st.message());
  if (writer)
    if (auto st = writer->commit(); !st) return fail(st.message());

  if (a.json) {
    nlohmann::json j = {{"model", p->model.path.string()},
                        {"n_ctx", n_ctx},
                        {"chunks", plan->chunks},
                        {"tokens_scored", nll.count},
                        {"ppl", nll.perplexity()},
                        {"ppl_error", nll.perplexity_error()}};
    if (compare) j["kl_divergence"] = kld_json(kld.summary());
    if (!a.save_logits.empty()) j["saved_logits"] = a.save_logits;
    std::cout << j.dump() << "\n";
    return 0;
  }
  if (compare) {
    std::cout << "\n" << quality::kld_report(kld.summary());
  } else {
    std::cout << "\nFinal estimate: PPL = " << fixed(nll.perplexity(), 4) << " +/- " << fixed(nll.perplexity_error(), 5)
              << "\n";
  }
  if (!a.save_logits.empty()) std::cerr << "perplexity: saved the reference log-probabilities to " << a.save_logits << "\n";
  return 0;
}

}  // namespace perplexity_cmd

void add_perplexity_command(CLI::App& app, Dispatch& d) {
  using namespace perplexity_cmd;
  auto a = std::make_shared<PerplexityArgs>();
  auto* cmd = app.add_subcommand("perplexity", "Perplexity of a text, llama-perplexity style; KL divergence against a reference run");
  add_pipeline_flags(*cmd, a->flags, kSourceFlags | kModelFlags | kContextFlags | kBackendFlags | kPlacementFlags);
  cmd->add_option("-f,--file", a->text_file, "The text to score");
  cmd->add_option("--chunks", a->chunks, "Score at most this many chunks (default: all)")->transform(integer_in(1, kMaxTokens));
  cmd->add_option("--save-logits,--kl-divergence-base", a->save_logits,
                  "Write this run's log-probabilities to FILE, the reference for --kl-divergence (llama.cpp's format)");
  cmd->add_option("--kl-divergence", a->kl_file, "Compare this run with the reference FILE: KL divergence, top-1 agreement, Δp")
      ->expected(0, 1);
  cmd->add_flag("--json", a->json, "Print one JSON object with the figures instead of the text report");
  cmd->callback([&d, a, cmd] {
    a->kl_flag = cmd->count("--kl-divergence") > 0;
    d.run = [a] { return run_perplexity(*a); };
  });
}

}  // namespace sy::cli
