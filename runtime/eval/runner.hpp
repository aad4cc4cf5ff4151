// Running an eval: each pipeline in turn (one model in memory at a time), the reference
// first. Per prompt, each pipeline generates greedily, is teacher-forced on the reference's
// greedy output (so every pipeline is scored on the same tokens, whatever it would have
// generated), and samples `runs` times with seeds seed, seed+1, ... The reference's
// distributions are kept in llama.cpp's KLD record encoding (2 bytes per vocabulary entry).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "eval/prompts.hpp"
#include "eval/spec.hpp"
#include "quality/kld.hpp"

namespace sy::eval {

struct PromptOutcome {
  std::vector<int32_t> greedy;               ///< the greedy output's tokens
  std::string greedy_text;
  std::vector<std::vector<int32_t>> sampled; ///< per run
};

struct PipelineResult {
  std::string name;
  bool reference = false;
  quality::KldSummary kld;  ///< teacher-forced on the reference's greedy outputs, against its distributions
  int64_t scored_tokens = 0;
  double exact_match = 0;        ///< prompts whose greedy output equals the reference's
  double common_prefix = 0;      ///< mean tokens before the greedy output first differs from the reference's
  double seeded_agreement = -1;  ///< sampled runs equal to the reference's run with the same seed; -1: no runs
  double consistency = -1;       ///< pairs of one prompt's sampled runs that are equal; -1: under two runs
  int64_t prompt_tokens = 0, generated_tokens = 0;
  double prompt_seconds = 0, generation_seconds = 0;
  std::vector<PromptOutcome> prompts;
  [[nodiscard]] double prompt_tps() const { return prompt_seconds > 0 ? prompt_tokens / prompt_seconds : 0; }
  [[nodiscard]] double generation_tps() const { return generation_seconds > 0 ? generated_tokens / generation_seconds : 0; }
};

/// Progress lines ("eval: q8-kv: prompt 3/12").
using Log = std::function<void(const std::string&)>;

/// Runs every pipeline of `spec` on `prompts`; results in the spec's order.
Result<std::vector<PipelineResult>> run_eval(const EvalSpec& spec, const std::vector<Prompt>& prompts, const Log& log = {});

/// The agreement metrics between outcomes (pure, for tests): exact match, common prefix,
/// seeded agreement and consistency of `mine` against `reference`, written into `r`.
void score_outcomes(const std::vector<PromptOutcome>& mine, const std::vector<PromptOutcome>& reference, int64_t runs,
                    PipelineResult& r);

}  // namespace sy::eval
