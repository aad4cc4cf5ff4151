// The backend conformance suite, as `switchyard conformance` runs it: the op cases on one
// device of a backend against the CPU backend's scalar kernels, then (optionally) every
// shared fixture through a pipeline that places the model on that backend.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "conformance/report.hpp"
#include "switchyard/status.hpp"

namespace sy::conformance {

struct Options {
  std::string backend;                 ///< the backend plugin under test ("vulkan", "cpu", "fake")
  int64_t device = 0;                  ///< which of its devices
  std::vector<std::string> ops;        ///< op names to run; empty: all
  std::vector<std::string> types;      ///< storage type names to run; empty: all
  std::filesystem::path fixtures;      ///< shared/fixtures; empty: no fixture part
  std::vector<std::string> fixture_names;  ///< substrings of reference file names; empty: all
  bool fixtures_only = false;          ///< skip the op cases
  bool require_all = false;            ///< an unsupported case fails the run
  std::vector<std::string> may_refuse; ///< op names exempt from require_all
  /// The fixtures' placement.cpu_moe ("all" or a layer count): routed experts in RAM, the
  /// rest on the backend (the hybrid runs); empty: every layer on the backend.
  std::string cpu_moe;
  /// The fixtures' pipelines say `strict: true`: a node that would run off the backend
  /// (or a weight or cache it cannot hold) fails the fixture instead of falling back.
  bool strict = false;
  std::vector<std::filesystem::path> plugin_path;  ///< extra plugin directories, searched after the default ones
};

/// Runs the suite into `report`; `progress` gets a line per fixture as it finishes.
/// Errors before anything ran: invalid_argument (an unknown op or type name, a missing
/// fixtures folder), not_found (no such backend plugin), unavailable (the backend has no
/// usable device here).
Status run_suite(const Options& o, Report& report, std::ostream& progress);

}  // namespace sy::conformance
