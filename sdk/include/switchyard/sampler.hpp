// Samplers: each transforms a candidate list; a chain of them picks the next token.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "switchyard/component.hpp"
#include "switchyard/status.hpp"

namespace sy {

/// One candidate token.
struct Candidate {
  int32_t id;
  float logit;
  float p;  ///< probability, valid only after a sampler that computes it (softmax-based ones)
};

/// The candidates of one step. Samplers may reorder, drop, or rescale them.
struct CandidateList {
  std::vector<Candidate> items;
  bool sorted = false;       ///< true when items are sorted by logit, descending
  int32_t selected = -1;     ///< set by a terminal sampler (greedy, dist): the chosen token id
};

/// Per-sequence context a sampler may read.
struct SamplerContext {
  std::span<const int32_t> prompt;   ///< prompt tokens of the sequence
  std::span<const int32_t> output;   ///< tokens generated so far
  std::span<const std::string> pieces;  ///< text of every token id (empty when the model has no tokenizer)
};

/// A sampler instance; one per sequence, since some keep state (RNG, mirostat's mu).
class Sampler : public Component {
 public:
  [[nodiscard]] ComponentKind kind() const noexcept final { return ComponentKind::sampler; }
  /// Transforms the candidates (and may set `selected`).
  [[nodiscard]] virtual Status apply(CandidateList& cands, const SamplerContext& ctx) noexcept = 0;
  /// Informs the sampler that `token` was chosen (for stateful samplers).
  virtual void accept(int32_t token) noexcept { (void)token; }
  /// Returns to the state right after construction (new conversation).
  virtual void reset() noexcept {}
};

}  // namespace sy
