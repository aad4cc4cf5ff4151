// How many prompt tokens a step may take while other sequences are generating. A step's
// tokens all wait for the slowest part of it, so a prompt chunk of context.batch tokens
// (2048 by default) holds every running stream for as long as that prefill takes: seconds
// on a CPU. With a step-time target, the scheduler gives prompts only what fits: it learns
// the time of a step as a + b * prompt tokens from the steps it ran (a: a step of decode
// tokens alone, b: seconds per prompt token) and takes (target - a) / b tokens, never fewer than a
// floor so prompts always advance. Steps with nothing generating are not capped: no stream
// waits for them. llama-server has no such bound (its batch holds up to n_batch prompt
// tokens); vLLM's token budget per step (max_num_batched_tokens) is the same idea in tokens.
#pragma once

#include <cstdint>

namespace sy::serving {

class PrefillBudget {
 public:
  /// target_s: the step time to keep to while streams run; 0 turns the bound off.
  /// floor: the fewest prompt tokens a step may take.
  PrefillBudget(double target_s, int64_t floor) : target_s_(target_s), floor_(floor < 1 ? 1 : floor) {}

  /// A step of `decode` generating tokens and `prompt` prompt tokens took `seconds`.
  void observe(int64_t decode, int64_t prompt, double seconds);

  /// The most prompt tokens the next step may take when `decode` sequences generate in it,
  /// at most `limit` (what the token budget leaves).
  [[nodiscard]] int64_t cap(int64_t decode, int64_t limit) const;

 private:
  double target_s_;
  int64_t floor_;
  // Running estimates (exponential averages over recent steps): the seconds of a step with
  // no prompt tokens, and the seconds per prompt token beyond that.
  double decode_step_s_ = 0;
  double per_prompt_s_ = 0;
  bool have_decode_ = false, have_prompt_ = false;
};

}  // namespace sy::serving
