// The engine thread: one continuous-batching step loop over every running request (vLLM's
// scheduler, llama-server's slots). Each step decodes one token for every sequence that is
// generating and fills the rest of the step's token budget (context.batch) with prompt
// chunks of sequences still prefilling, kept to a step time while others generate
// (prefill_budget.hpp), so a long prompt never stalls the others. Requests
// are admitted when the KV pool has the blocks for their prompt (after reusing a cached
// prefix); when the pool runs out mid-generation the newest sequence is preempted and later
// recomputed, which the client never sees. The engine, the KV cache and the prefix cache
// belong to this thread alone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/engine.hpp"
#include "registry/registry.hpp"
#include "serving/metrics.hpp"
#include "serving/prefill_budget.hpp"
#include "serving/request.hpp"
#include "tokenizer/tokenizer.hpp"

namespace sy::serving {

class JsonVocab;
class PrefixCache;

struct SchedulerConfig {
  int64_t slots = 1;           ///< sequences generated at once (at most the KV cache's)
  int64_t batch_tokens = 2048; ///< tokens per step (context.batch)
  int64_t max_waiting = 256;   ///< requests waiting before submit answers "exhausted"
  bool prefix_cache = true;
  /// Hybrid models: a recurrent-state checkpoint every this many positions (a multiple of
  /// the block size) and at the end of each prompt's last full block, into the KV cache's
  /// checkpoint slots (KvConfig::n_state_checkpoints).
  int64_t checkpoint_interval = 256;
  /// While sequences generate, a step's prompt chunks are kept to what fits this step time
  /// (server.max_step_ms; serving/prefill_budget.hpp); 0: only batch_tokens bounds them.
  double max_step_s = 0;
};

class Scheduler {
 public:
  /// `engine`, `tokenizer` (may be null) and `registry` must outlive the scheduler.
  Scheduler(engine::Engine& engine, const tok::Tokenizer* tokenizer, registry::Registry& registry,
            SchedulerConfig cfg, Metrics* metrics = nullptr);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Starts the engine thread.
  void start();
  /// Cancels what is running or waiting (each gets its done event) and joins the thread.
  void stop();

  /// Queues a request. Refused (nothing queued, no event) when its prompt leaves no room in
  /// the context (out_of_range) or too many requests wait already (exhausted).
  Status submit(std::shared_ptr<Request> r);
  /// Wakes the engine thread after a request's cancel flag was set, so its blocks are freed
  /// within one step even when nothing else is running.
  void notify();

  [[nodiscard]] const SchedulerConfig& config() const { return cfg_; }
  [[nodiscard]] int64_t context_length() const { return n_ctx_; }

 private:
  struct Seq;
  void loop();
  void drain_incoming();
  void reap();
  void admit();
  bool step();
  void build_batch();
  void preempt_newest();
  void after_step(std::span<const float> logits);
  void on_token(Seq& s, std::span<const float> logits);
  void finish(Seq& s, const std::string& reason);
  void fail(Seq& s, const Status& why);
  void release(Seq& s, bool cache_blocks);
  void save_checkpoint(Seq& s);
  void update_gauges();
  [[nodiscard]] bool is_checkpoint(const Seq& s, int64_t pos) const;
  std::shared_ptr<const JsonVocab> json_vocab();

  engine::Engine& engine_;
  const tok::Tokenizer* tok_;
  registry::Registry& reg_;
  SchedulerConfig cfg_;
  Metrics* metrics_;
  int64_t n_ctx_;
  std::vector<std::string> pieces_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Request>> incoming_;
  bool stopping_ = false;
  std::atomic<int64_t> waiting_count_{0};  // requests in waiting_, for submit's bound
  std::thread thread_;

  // Engine thread only.
  std::unique_ptr<PrefixCache> cache_;
  std::vector<std::unique_ptr<Seq>> waiting_, active_;
  std::vector<int32_t> free_ids_;
  int64_t order_ = 0;
  bool hold_admission_ = false;  // set by a preemption until a sequence ends
  std::vector<engine::BatchToken> batch_;
  struct Fed {
    Seq* seq;
    int64_t n;
    bool logits;
  };
  std::vector<Fed> fed_;
  int64_t step_decode_ = 0, step_prompt_ = 0;  // the batch's generating and prompt tokens
  PrefillBudget prefill_budget_;
  std::vector<float> logits_;
  std::vector<float> masked_;  // logits under a JSON constraint
  std::shared_ptr<const JsonVocab> json_vocab_;
};

}  // namespace sy::serving
