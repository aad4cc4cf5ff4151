// The pipeline's `sampling:` list as one chain: each sampler transforms the candidates in
// turn until a terminal one (greedy, dist) selects a token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "registry/registry.hpp"

namespace sy::engine {

class SamplerChain {
 public:
  /// Creates the samplers; `seed`, when given, replaces every sampler's "seed" parameter.
  static Result<SamplerChain> create(registry::Registry& reg, const std::vector<pipeline::ComponentConfig>& chain,
                                     std::optional<int64_t> seed);

  /// Picks the next token from one position's logits.
  Result<int32_t> sample(std::span<const float> logits, const SamplerContext& ctx);
  /// Tells stateful samplers which token was used.
  void accept(int32_t token);
  /// Returns every sampler to its fresh state (a new conversation).
  void reset();

 private:
  std::vector<registry::Owned<Sampler>> samplers_;
  CandidateList cands_;
};

}  // namespace sy::engine
