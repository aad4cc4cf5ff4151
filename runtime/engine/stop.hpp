// Stop strings for streamed output: text is released only when it can no longer be the
// start of a stop string, and a stop string is found even when it spans tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sy::engine {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  /// Adds newly decoded text; returns what may be shown now. After a stop string is seen,
  /// stopped() is true and the returned text ends right before it.
  std::string push(std::string_view text);
  /// The text held back at the end (no stop string completed).
  std::string flush();
  [[nodiscard]] bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace sy::engine
