#include "serving/local_session.hpp"

#include "serving/event_queue.hpp"

namespace sy::serving {

Status LocalSession::generate(const std::shared_ptr<Request>& r, const std::function<void(const Event&)>& on_event,
                              const std::atomic<bool>* interrupt) {
  auto q = std::make_shared<EventQueue>();
  r->sink = [q](Event&& e) { q->push(std::move(e)); };
  if (auto st = sched_.submit(r); !st) return st;
  for (;;) {
    // Checked on every wake-up, so a stream of tokens cannot hide an interrupt.
    if (interrupt && *interrupt && !r->cancel) {
      r->cancel = true;
      sched_.notify();
    }
    Event e;
    if (!q->pop(e, std::chrono::milliseconds(50))) continue;
    on_event(e);
    if (e.kind != Event::Kind::text) return Status::ok();
  }
}

}  // namespace sy::serving
