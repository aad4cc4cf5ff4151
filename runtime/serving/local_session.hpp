// `run` and `chat` on the serving layer: a private scheduler driven from the calling
// thread, which receives each request's events in order and can interrupt it (Ctrl-C).
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "serving/scheduler.hpp"

namespace sy::serving {

class LocalSession {
 public:
  LocalSession(engine::Engine& engine, const tok::Tokenizer* tokenizer, registry::Registry& registry, SchedulerConfig cfg)
      : sched_(engine, tokenizer, registry, cfg) {
    sched_.start();
  }

  /// Runs `r` to its end, handing every event to `on_event` on this thread. When
  /// `*interrupt` becomes true the request is cancelled (its done event says "cancelled").
  /// An error only when the request could not be queued.
  Status generate(const std::shared_ptr<Request>& r, const std::function<void(const Event&)>& on_event,
                  const std::atomic<bool>* interrupt = nullptr);

 private:
  Scheduler sched_;
};

}  // namespace sy::serving
