// Running one measured process: `bench` starts itself (and the peer) once per repetition,
// reads the process's stdout and takes its peak resident memory from the kernel's own
// accounting (wait4's rusage), which sees every page the process touched, mapped file
// pages included.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/status.hpp"

namespace sy::bench {

struct ProcessResult {
  int exit_code = 0;     ///< 128 + N when killed by signal N
  std::string out;       ///< everything it wrote to stdout (stderr is passed through)
  uint64_t peak_rss = 0; ///< bytes (ru_maxrss)
  double wall_s = 0;     ///< from fork to exit
};

/// Runs argv[0] (a path, not searched in PATH) with `argv`; an error only when it cannot
/// be started at all (the exit code reports a failure inside).
Result<ProcessResult> run_process(const std::vector<std::string>& argv);

/// This process's command line as it was typed (/proc/self/cmdline), argv[0] included.
std::vector<std::string> self_cmdline();

}  // namespace sy::bench
