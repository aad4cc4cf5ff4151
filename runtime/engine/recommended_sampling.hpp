// A model's recommended sampling (Hugging Face generation_config.json, or llama.cpp's GGUF
// keys general.sampling.*) in place of Switchyard's built-in defaults, as llama.cpp applies
// its GGUF keys: a value the pipeline did not set (file, flags or --set) takes the model's.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "registry/registry.hpp"
#include "switchyard/metadata.hpp"

namespace sy::engine {

/// Replaces the built-in values of `chain` (items whose `builtin` is set) by the model's
/// recommendation in `md`: top_k, top_p, min_p and temperature one by one; when no item of
/// the chain was written by the user, also do_sample false (greedy decoding) and a repetition
/// penalty other than 1. Returns what changed, for the log ("" when nothing did).
std::string apply_recommended_sampling(std::vector<pipeline::ComponentConfig>& chain, const Metadata& md,
                                       const registry::Registry& reg);

}  // namespace sy::engine
