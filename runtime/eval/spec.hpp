// An eval file (`switchyard eval FILE.yaml`): the prompt set, how many tokens and runs, the
// pipelines to compare and the reference they are compared with, and the thresholds that
// make the run fail. docs/quality.md describes every key; configs/eval/ has examples.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/status.hpp"

namespace sy::eval {

/// One pipeline to run: a pipeline file and `--set` style overrides applied to it.
struct PipelineEntry {
  std::string name;
  std::filesystem::path file;     ///< resolved against the eval file's folder
  std::vector<std::string> sets;  ///< "key.path=value", in order
};

/// Limits a pipeline must keep; unset ones are not checked.
struct Thresholds {
  std::optional<double> min_top1;             ///< teacher-forced top-1 agreement, 0..1
  std::optional<double> max_mean_kld;         ///< mean KL divergence per token (nats)
  std::optional<double> max_p99_kld;          ///< 99th percentile of it
  std::optional<double> min_exact_match;      ///< prompts whose greedy output equals the reference's, 0..1
  std::optional<double> min_seeded_agreement; ///< sampled runs equal to the reference's with the same seed, 0..1
  std::optional<double> min_consistency;      ///< pairs of a prompt's sampled runs that agree, 0..1
  [[nodiscard]] bool empty() const;
};

struct EvalSpec {
  std::filesystem::path file;     ///< the eval file itself
  std::filesystem::path prompts;  ///< JSONL, resolved against the eval file's folder
  int64_t max_tokens = 32;
  int64_t runs = 3;               ///< sampled runs per prompt; 0 skips the sampled runs
  int64_t seed = 1;               ///< run i uses seed + i
  std::string sampling;           ///< YAML text of a sampling list for the sampled runs; empty: each pipeline's own
  std::string reference;          ///< a pipeline's name
  std::vector<PipelineEntry> pipelines;  ///< in the file's order
  std::map<std::string, Thresholds> thresholds;  ///< per pipeline name; "all": every pipeline but the reference
};

/// The names thresholds accept, for messages.
std::string threshold_names();

/// Reads and checks an eval file. Errors name the file, the line and the key, and say what
/// is expected.
Result<EvalSpec> load_spec(const std::filesystem::path& file);

/// The same from text (`name` stands for the file; relative paths resolve against `dir`).
Result<EvalSpec> parse_spec(const std::string& text, const std::string& name, const std::filesystem::path& dir);

}  // namespace sy::eval
