// A bench row's measurements and the figures derived from them: what every output format
// (markdown, CSV, JSON) prints, computed in one place.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/peer.hpp"
#include "bench/rows.hpp"
#include "bench/stats.hpp"

namespace sy::bench {

/// One repetition of ours: the child's figures and its peak RSS from wait4.
struct OurSample {
  double load_ms = 0, prompt_ms = 0, ttft_ms = 0, gen_ms = 0;
  uint64_t peak_rss = 0;
};

/// One repetition of the peer. Its load time is estimated as the process's wall time less
/// its timed samples (llama-bench reports no load time; the estimate includes its warmup).
struct PeerSample {
  PeerRun run;
  double load_s = 0;
  uint64_t peak_rss = 0;
};

struct RowResult {
  RowSpec spec;
  std::vector<OurSample> ours;
  std::vector<PeerSample> peer;  ///< empty without --compare
  nlohmann::ordered_json info;   ///< the first child's model facts (measure_row's other keys)
  double bandwidth = 0;          ///< bytes/s read with this row's threads (0: not measured)
};

struct Figures {
  Summary pp_ts, tg_ts;  ///< tokens/s over the repetitions (empty when p or n is 0)
  double ttft_ms = 0, load_s = 0;
  uint64_t peak_rss = 0;       ///< the largest over the repetitions
  double rss_over_file = 0;
  double bytes_per_token = 0;  ///< generation
  double bandwidth_share = 0;  ///< bytes/token x mean tg t/s / bandwidth (0 when unknown)
};

Figures our_figures(const RowResult& r);

struct PeerFigures {
  Summary pp_ts, tg_ts, load_s;
  uint64_t peak_rss = 0;
};

PeerFigures peer_figures(const RowResult& r);

}  // namespace sy::bench
