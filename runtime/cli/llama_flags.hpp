// llama.cpp's command-line flags, each an override of one pipeline key (docs/cli.md has
// the table). Commands add the groups they take; after parsing, the flags become edits of
// the pipeline tree, applied after `extends` and `--set` and before validation, so a bad
// value is reported against the flag that gave it ("--temp -1: ...").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipeline/load.hpp"

namespace sy::cli {

/// Which flags a command takes.
enum FlagGroups : unsigned {
  kSourceFlags = 1u << 0,     ///< -P, -m, --set, --print-pipeline
  kModelFlags = 1u << 1,      ///< --no-mmap, --mlock
  kContextFlags = 1u << 2,    ///< -c, -b, -ub, -np, -fa, -ctk, -ctv
  kBackendFlags = 1u << 3,    ///< -t, -dev, --list-devices
  kPlacementFlags = 1u << 4,  ///< -ngl, --n-cpu-moe, --cpu-moe, -ot
  kSamplingFlags = 1u << 5,   ///< -s, --temp, --top-k, --top-p, --min-p, penalties
  kDeviceFlags = 1u << 6,     ///< -dev, --list-devices without -t (bench takes -t as its own list)
  kAllRunFlags = kSourceFlags | kModelFlags | kContextFlags | kBackendFlags | kPlacementFlags | kSamplingFlags,
};

/// The values of the flags, as typed; empty optionals were not given.
struct PipelineFlags {
  std::string pipeline;  ///< -P FILE
  std::string model;     ///< -m FILE
  std::vector<std::string> sets;
  bool print_pipeline = false;
  bool list_devices = false;

  bool no_mmap = false, mlock = false;
  std::optional<std::string> ctx, batch, ubatch, parallel, flash_attn, cache_type_k, cache_type_v;
  std::optional<std::string> threads, device;
  std::optional<std::string> gpu_layers, n_cpu_moe;
  bool cpu_moe = false;
  std::vector<std::string> override_tensor;
  std::optional<std::string> seed, temp, top_k, top_p, min_p, repeat_penalty, repeat_last_n, presence_penalty,
      frequency_penalty;
};

/// Declares the flags of `groups` on `cmd`, storing into `f` (which must outlive parsing).
void add_pipeline_flags(CLI::App& cmd, PipelineFlags& f, unsigned groups);

/// The tree edit the given flags stand for. A random seed (`-s -1`) must be resolved
/// before (resolve_random_seed).
pipeline::TreeEdit flags_edit(const PipelineFlags& f);

/// llama.cpp's -ot value "PATTERN=BUFFER[,PATTERN=BUFFER...]" split into rules, each
/// device lower-cased (CPU, CUDA0, Vulkan0 are llama.cpp's buffer names); a comma inside
/// {n,m} belongs to the pattern.
std::vector<std::string> split_override_tensor(const std::string& text);

/// `-s -1` becomes a random seed, returned so the caller can print
/// it; nullopt when no random seed was asked for.
std::optional<uint64_t> resolve_random_seed(PipelineFlags& f);

/// The validated pipeline for a command: -P FILE, or the built-in default (the cpu backend
/// and every default) around -m FILE, with --set and the flags applied. Diagnostics go to
/// stderr; nullopt means exit with status 1.
std::optional<pipeline::Pipeline> load_with_flags(const std::string& command, PipelineFlags& f);

/// A token count given as a flag (-c, -b): `fallback` when absent; else a whole number from
/// `lo`, or an error naming the flag and its value.
Result<int64_t> token_count_flag(const std::optional<std::string>& v, const char* flag, int64_t fallback, int64_t lo);

/// The flags of a chunked evaluation (perplexity, imatrix), as llama-perplexity sizes it:
/// context n_ctx, as many sequences as whole chunks fit in `batch`, that many chunks' tokens
/// per batch (`eff_batch`), and a ubatch no larger.
PipelineFlags chunked_flags(const PipelineFlags& flags, int64_t n_ctx, int64_t batch, int64_t& eff_batch);

/// Why `--cache-type-v V` cannot be honoured when the K cache's type is `k` (one type holds
/// both, context.kv_type), as the end of a sentence; nullopt when they agree.
std::optional<std::string> kv_type_conflict(const std::string& k, const std::string& v);

/// The "did you mean -P?" message when a -p value looks like a pipeline file (one word
/// ending in .yaml or .yml), as -p named the pipeline before llama.cpp's flags; else nullopt.
std::optional<std::string> prompt_names_pipeline(const std::string& prompt);

/// llama.cpp's samplers in the order its default chain runs them; a flag that tunes a
/// sampler the chain lacks inserts it at this position relative to the others.
const std::vector<std::string>& canonical_sampler_order();

}  // namespace sy::cli
