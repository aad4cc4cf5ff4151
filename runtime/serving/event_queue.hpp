// Hands a request's events from the engine thread (which must never block) to the
// connection thread waiting for them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "serving/request.hpp"

namespace sy::serving {

class EventQueue {
 public:
  void push(Event&& e) {
    {
      std::lock_guard lk(mu_);
      q_.push_back(std::move(e));
    }
    cv_.notify_one();
  }
  /// The next event, or false after `timeout` without one.
  bool pop(Event& out, std::chrono::milliseconds timeout) {
    std::unique_lock lk(mu_);
    if (!cv_.wait_for(lk, timeout, [&] { return !q_.empty(); })) return false;
    out = std::move(q_.front());
    q_.pop_front();
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> q_;
};

}  // namespace sy::serving
