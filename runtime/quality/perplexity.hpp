// Perplexity over a text as llama-perplexity computes it: the tokens are cut into chunks of
// n_ctx, each evaluated from an empty context (its first token replaced by BOS when the
// model adds one), and only the second half of each chunk is scored, so every scored token
// has at least n_ctx/2 tokens of context. With a batch of k * n_ctx tokens, k chunks run at
// once as separate sequences.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/engine.hpp"
#include "switchyard/status.hpp"

namespace sy::quality {

struct ChunkPlan {
  int64_t n_ctx = 0;    ///< tokens per chunk
  int64_t chunks = 0;   ///< chunks evaluated
  int64_t batch = 0;    ///< tokens per decode call
  int64_t n_seq = 1;    ///< chunks evaluated at once
  [[nodiscard]] int64_t first() const { return n_ctx / 2; }
  /// Positions scored per chunk: first .. n_ctx - 2 (each predicts the token after it).
  [[nodiscard]] int64_t scored() const { return n_ctx - 1 - first(); }
};

/// The plan for `n_tokens` tokens. `max_chunks` < 0: every whole chunk. Too few tokens for two
/// chunks is an error with both numbers, as in llama-perplexity.
Result<ChunkPlan> plan_chunks(int64_t n_tokens, int64_t n_ctx, int64_t max_chunks, int64_t batch);

/// Called per chunk with its tokens (as in the text) and the logits of its scored positions
/// (scored() rows of n_vocab).
using ChunkFn = std::function<Status(int64_t chunk, std::span<const int32_t> tokens, std::span<const float> logits)>;

/// Evaluates the plan's chunks of `tokens` in order. `bos` < 0: the first token is kept.
/// Sequences 0 .. n_seq-1 of the engine's cache are used and left empty.
Status evaluate_chunks(engine::Engine& eng, std::span<const int32_t> tokens, const ChunkPlan& plan, int32_t bos,
                       const ChunkFn& fn);

}  // namespace sy::quality
