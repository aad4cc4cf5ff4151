// Bytes one decode step reads, from a model's tensor table: the floor memory bandwidth sets
// under generation speed. `bench` divides measured generation speed by it to show how much
// of the machine's bandwidth a step uses.
#pragma once

#include <cstdint>

#include "planner/model_desc.hpp"

namespace sy::bench {

struct DecodeBytes {
  double dense = 0;    ///< every tensor of the blocks that run, routed experts excepted
  double experts = 0;  ///< routed experts, scaled by n_expert_used / n_expert
  double head = 0;     ///< output.weight, or token_embd.weight when the embeddings are tied
  double embd_row = 0; ///< one row of token_embd.weight (0 when tied: the head reads it all)
  double other = 0;    ///< global tensors besides these (output_norm, rope factors)
  double kv = 0;       ///< K and V of the positions attended to
  double state = 0;    ///< recurrent state, read and written
  [[nodiscard]] double total() const { return dense + experts + head + embd_row + other + kv + state; }
};

/// For one token attending to `context` positions (a mean over a generation run may be
/// fractional). kv_bytes_per_token: K and V bytes of one position over all layers;
/// state_bytes: one sequence's recurrent state. Blocks past hp.n_layer (multi-token
/// prediction, never run) are not counted.
DecodeBytes decode_bytes(const planner::ModelDesc& m, uint64_t kv_bytes_per_token, uint64_t state_bytes,
                         double context);

/// The mean context a generation run of n tokens after `depth` cached ones attends to:
/// step i (from 0) sees depth + i + 1 positions, itself included.
double mean_generation_context(int64_t depth, int64_t n);

}  // namespace sy::bench
