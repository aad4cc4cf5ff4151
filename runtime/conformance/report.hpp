// What a conformance run found, and how it is printed: one line per failing case or
// fixture, the unsupported cases grouped by op, a summary, or all of it as JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchyard/ops.hpp"
#include "switchyard/storage.hpp"

namespace sy::conformance {

enum class Outcome { pass, fail, unsupported, error };

struct CaseResult {
  std::string name;  ///< Case::name()
  OpKind op = OpKind::copy;
  StorageType type = StorageType::F32;
  Outcome outcome = Outcome::pass;
  double error = 0;          ///< worst relative error over the compared tensors
  double tolerance = 0;
  std::string tolerance_why;
  std::string detail;        ///< where the worst error is, or why it could not run
};

struct FixtureResult {
  std::string name;  ///< the reference file's name without .ref.json
  Outcome outcome = Outcome::pass;
  double max_abs = 0, max_abs_tolerance = 0, rms = 0, rms_tolerance = 0;
  size_t argmax_misses = 0;                          ///< among the steps the file requires
  size_t greedy_same = 0, greedy_required = 0, greedy_total = 0;  ///< versus the CPU run
  uint64_t bytes_per_token = 0;
  size_t flip_steps = 0;    ///< documented rounding-flip steps held to their own bound
  double flip_max_abs = 0;  ///< moved between devices by the last greedy decode step
  std::string detail;
};

struct Report {
  std::string backend;
  std::string device;       ///< name and description of the device under test
  std::string reference;    ///< the reference device's description
  bool require_all = false;
  /// Ops exempt from require_all: ones the backend leaves to the CPU by design for now.
  std::vector<OpKind> may_refuse;
  std::vector<CaseResult> cases;
  std::vector<FixtureResult> fixtures;
  std::vector<std::string> notes;  ///< things the run skipped, and why

  /// 0 when everything passed (and, with require_all, every case was supported), else 1.
  [[nodiscard]] int exit_code() const;
};

/// Failing cases and fixtures one per line, then unsupported cases by op, then a summary.
void print_text(const Report& r, std::ostream& out);
/// The whole report.
nlohmann::json to_json(const Report& r);

/// "pass", "fail", "unsupported", "error".
const char* outcome_name(Outcome o);

}  // namespace sy::conformance
