// Helpers every sampler needs: ordering and probabilities of a candidate list.
#pragma once

#include "switchyard/sampler.hpp"

namespace sy::samplers {

/// The candidate order: logit descending, ties by ascending id.
inline bool by_logit(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

/// Sorts by logit, descending (stable on ties by id, so results do not depend on the
/// input order), and marks the list sorted.
void sort_by_logit(CandidateList& c);

/// Fills p with softmax(logit), computed in double for platform-independent results.
void softmax(CandidateList& c);

/// Error for NaN or infinite logits, naming the first offending token; ok otherwise.
/// -inf is allowed: it is how a token is masked out.
Status check_finite(const CandidateList& c, const char* sampler);

}  // namespace sy::samplers
