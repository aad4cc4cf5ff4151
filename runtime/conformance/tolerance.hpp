// How far a device may be from the CPU scalar reference on a case, and why. Errors are
// measured per compared tensor as max |device - reference| / max |reference|, so one bound
// holds for every shape and scale; ids (top_k, argsort) must match exactly.
#pragma once

#include <string>
#include <vector>

#include "conformance/cases.hpp"

namespace sy::conformance {

struct Tolerance {
  double max_rel = 0;  ///< bound on max |device - reference| / max |reference|
  std::string why;     ///< the derivation in a sentence
};

/// The tolerance of a case (by op and storage types).
Tolerance tolerance(const Case& c);

/// The worst element of `got` against `want` (same length).
struct Diff {
  double rel = 0;      ///< max |got - want| / max |want|; infinite for NaN or a length mismatch
  size_t index = 0;    ///< where the largest difference is
  double got = 0, want = 0, ref_max = 0;
};
Diff measure(const std::vector<double>& got, const std::vector<double>& want);

}  // namespace sy::conformance
