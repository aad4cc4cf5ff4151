#include "quality/perplexity.hpp"

#include <algorithm>
#include <string>

namespace sy::quality {

Result<ChunkPlan> plan_chunks(int64_t n_tokens, int64_t n_ctx, int64_t max_chunks, int64_t batch) {
  if (n_ctx < 4) return error::invalid_argument("-c " + std::to_string(n_ctx) + ": a chunk needs at least 4 tokens");
  if (batch < 1) return error::invalid_argument("-b " + std::to_string(batch) + ": the batch must be positive");
  if (n_tokens < 2 * n_ctx)
    return error::invalid_argument("the text tokenizes to " + std::to_string(n_tokens) + " tokens; a context of " +
                                   std::to_string(n_ctx) + " needs at least " + std::to_string(2 * n_ctx) +
                                   " (use a longer text or a smaller -c)");
  ChunkPlan p;
  p.n_ctx = n_ctx;
  p.chunks = n_tokens / n_ctx;
  if (max_chunks >= 0) p.chunks = std::min(p.chunks, max_chunks);
  p.batch = batch;
  p.n_seq = std::max<int64_t>(1, batch / n_ctx);
  return p;
}

Status evaluate_chunks(engine::Engine& eng, std::span<const int32_t> tokens, const ChunkPlan& plan, int32_t bos,
                       const ChunkFn& fn) {
  const int64_t n_vocab = eng.n_vocab(), first = plan.first(), scored = plan.scored();
  std::vector<engine::BatchToken> batch;
  std::vector<float> step, logits;
  for (int64_t c0 = 0; c0 < plan.chunks; c0 += plan.n_seq) {
    const int64_t n_seq = std::min(plan.n_seq, plan.chunks - c0);
    for (int32_t s = 0; s < n_seq; ++s) {
      // Removing and adding empties the sequence: blocks freed, recurrent state zeroed.
      if (eng.kv().length(s) >= 0) (void)eng.kv().remove(s);
      if (auto st = eng.kv().add(s); !st) return st;
    }
    // Each sequence's tokens in order (the engine wants them consecutive), fed in slices of
    // the batch size; logits come back in the same order.
    batch.clear();
    for (int32_t s = 0; s < n_seq; ++s) {
      const int32_t* t = tokens.data() + (c0 + s) * plan.n_ctx;
      for (int64_t k = 0; k < plan.n_ctx; ++k)
        batch.push_back({s, k == 0 && bos >= 0 ? bos : t[k], k >= first && k < plan.n_ctx - 1});
    }
    logits.clear();
    for (size_t at = 0; at < batch.size(); at += static_cast<size_t>(plan.batch)) {
      const size_t n = std::min(batch.size() - at, static_cast<size_t>(plan.batch));
      if (auto st = eng.decode(std::span(batch).subspan(at, n), step); !st) return st;
      logits.insert(logits.end(), step.begin(), step.end());
    }
    for (int32_t s = 0; s < n_seq; ++s) {
      const auto rows = std::span<const float>(logits).subspan(static_cast<size_t>(s * scored * n_vocab),
                                                               static_cast<size_t>(scored * n_vocab));
      if (auto st = fn(c0 + s, tokens.subspan(static_cast<size_t>((c0 + s) * plan.n_ctx), static_cast<size_t>(plan.n_ctx)),
                       rows);
          !st)
        return st;
    }
  }
  for (int32_t s = 0; s < std::min(plan.n_seq, plan.chunks); ++s)
    if (eng.kv().length(s) >= 0) (void)eng.kv().remove(s);
  return {};
}

}  // namespace sy::quality
