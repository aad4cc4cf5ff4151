// One generation request as the serving layer sees it: the prompt's tokens, how to generate
// (GenParams), where its output goes (a sink called on the engine thread), and a cancel flag
// any thread may set. `run`, `chat` and `serve` all build these; the Scheduler owns the rest
// of a request's state (sampler chain, stop matcher, detokenizer) while it runs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "switchyard/status.hpp"

namespace sy::serving {

using Clock = std::chrono::steady_clock;

/// Which queue a request waits in: interactive requests are admitted before batch ones, and
/// batch sequences are preempted first.
enum class Priority { interactive, batch };

struct GenParams {
  int64_t max_tokens = -1;  ///< -1: until end of generation or a full context
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool json_object = false;  ///< constrain the output to one JSON object (serving/json_constraint.hpp)
  int top_logprobs = -1;    ///< -1: no logprobs; otherwise the chosen token's and this many others'
  std::vector<pipeline::ComponentConfig> sampling;  ///< the chain, already checked
  std::vector<int32_t> force_ids;  ///< teacher forcing: feed these instead of the sampled ids
  /// After max_tokens, one more step computes the logits following the last token for
  /// Request::on_logits (run --logits-out compares every position).
  bool final_logits = false;
  Priority priority = Priority::interactive;
  int priority_level = 0;   ///< within a class, higher is admitted first
  std::optional<Clock::time_point> deadline;  ///< cancelled with an error past this time
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  ///< prompt tokens served from the prefix cache
};

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;  ///< the most likely tokens, best first
};

/// What a request produces, in order: text events, then exactly one done or error event.
struct Event {
  enum class Kind { text, done, error };
  Kind kind = Kind::text;
  std::string text;              ///< text: newly released output (whole UTF-8 characters)
  std::vector<int32_t> tokens;   ///< text: the tokens accepted in this step
  std::vector<TokenLogprob> logprobs;  ///< text: per token, when asked for
  int32_t sampled = -1;          ///< text, teacher forcing: the token the sampler picked
  /// done: "eos" (an end-of-generation token), "stop" (a stop string), "length"
  /// (max_tokens), "context" (the context is full), "cancelled"
  std::string finish_reason;
  Usage usage;                   ///< done and error
  Status error;                  ///< error
};

struct Timings {
  Clock::time_point arrived, admitted, first_token, finished;
  int64_t preemptions = 0;
};

struct Request {
  std::vector<int32_t> prompt;
  GenParams params;
  /// Called on the engine thread for every event; it must not block.
  std::function<void(Event&&)> sink;
  /// Called on the engine thread with each position's raw logits, when set (run --logits-out).
  std::function<void(int64_t pos, std::span<const float> logits)> on_logits;
  std::atomic<bool> cancel{false};
  Timings timings;  ///< written by the engine thread; read after the done event
};

}  // namespace sy::serving
