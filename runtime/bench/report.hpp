// `bench` output: llama-bench's markdown table with our columns added (the default),
// CSV with one line per row, and one JSON object with every figure and the raw samples.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/figures.hpp"

namespace sy::bench {

/// What the run's header says about the build and the machine.
struct RunInfo {
  std::string version, cpu;
  int hw_threads = 0;
  std::vector<std::pair<int, double>> bandwidth;  ///< (threads, bytes/s) measured
  std::string peer;                               ///< path of the peer, empty without --compare
};

/// One line per test (pp, then tg) of each row; with a peer, its line and a ratio line
/// (ours / peer, of the medians) follow ours.
std::string markdown(const std::vector<RowResult>& rows);

/// A header line and one line per row; the peer's columns only when it ran.
std::string csv(const std::vector<RowResult>& rows);

nlohmann::ordered_json json(const RunInfo& info, const std::vector<RowResult>& rows);

}  // namespace sy::bench
