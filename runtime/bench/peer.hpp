// `bench --compare`: running llama.cpp's llama-bench (the peer) on the same file and row,
// one repetition per process, and reading its JSON. The peer is an instrument the user
// points at; nothing here links to llama.cpp.
#pragma once

#include <string>
#include <vector>

#include "bench/rows.hpp"
#include "switchyard/status.hpp"

namespace sy::bench {

/// The flags of ours that change what the peer computes, in llama-bench's spelling;
/// empty strings were not given.
struct PeerFlags {
  std::string gpu_layers, n_cpu_moe, cache_type_k, cache_type_v, flash_attn, batch, ubatch, device;
  bool cpu_moe = false, no_mmap = false, mlock = false;
  std::vector<std::string> override_tensor;  ///< our -ot values (comma lists of rules)
};

/// llama-bench's command line for one repetition of `row` on `model`: -r 1 -o json, the
/// row's -p/-n/-d (and -t unless it is the pipeline's default), the flags translated
/// (-ot rules joined by ';', --no-mmap/--mlock as -lm, --cpu-moe as -ncmoe 999999).
/// Without -ngl the peer gets -ngl 0, as our default pipeline is the CPU alone.
std::vector<std::string> peer_argv(const std::string& peer, const std::string& model, const RowSpec& row,
                                   const PeerFlags& f);

/// What one peer process reported.
struct PeerRun {
  double pp_ts = 0, tg_ts = 0;  ///< tokens/s of the pp and tg tests (0: not run)
  double timed_s = 0;           ///< the sum of every test's samples_ns, in seconds
  std::string build_commit, model_type, backends, cpu_info;
  int64_t build_number = 0, model_size = 0, model_n_params = 0;
};

/// Parses llama-bench's `-o json` output (an array of test objects: n_prompt, n_gen,
/// avg_ts, samples_ns, build_commit, ...). An error says what is missing.
Result<PeerRun> parse_peer_json(const std::string& text);

}  // namespace sy::bench
