// A request's sampling fields applied to the pipeline's sampling chain: a field sets the
// matching sampler's parameter, or adds that sampler at its usual place in the chain
// (penalties and biases first, then top_k, top_p, min_p, temperature, then the terminal).
// Values are checked against the samplers' own schemas, read once at start-up, so a
// request is held to the same ranges as a pipeline.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "registry/registry.hpp"
#include "server/api_error.hpp"
#include "server/openai/request.hpp"

namespace sy::server::openai {

/// The installed samplers' parameter schemas.
struct SamplerSchemas {
  std::map<std::string, std::vector<ParamSpec>, std::less<>> params;
  /// Reads every sampler's schema from the registry (manifests only).
  static SamplerSchemas from(const registry::Registry& reg);
};

/// The chain for one request: `base` with the request's fields applied. `n_vocab` bounds
/// logit_bias token ids. temperature 0 means greedy decoding.
std::optional<ApiError> apply_sampling(const SamplingFields& f, const std::vector<pipeline::ComponentConfig>& base,
                                       const SamplerSchemas& schemas, int64_t n_vocab,
                                       std::vector<pipeline::ComponentConfig>& out);

}  // namespace sy::server::openai
