#include "server/parse/reasoning.hpp"

namespace sy::server {

namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

bool prompt_opens_reasoning(std::string_view prompt) {
  while (!prompt.empty() && is_ws(prompt.back())) prompt.remove_suffix(1);
  return prompt.ends_with(kOpen);
}

ReasoningSplitter::ReasoningSplitter(bool enabled, bool starts_in_reasoning)
    : state_(!enabled ? State::answer : starts_in_reasoning ? State::reasoning : State::before),
      strip_newlines_(enabled && starts_in_reasoning) {}

void ReasoningSplitter::push(std::string_view text, std::string& reasoning, std::string& answer) {
  buf_ += text;
  run(reasoning, answer);
}

void ReasoningSplitter::finish(std::string& reasoning, std::string& answer) {
  run(reasoning, answer);
  (state_ == State::reasoning ? reasoning : answer) += buf_;
  buf_.clear();
  if (state_ == State::before) state_ = State::answer;
}

void ReasoningSplitter::run(std::string& reasoning, std::string& answer) {
  if (state_ == State::before) {
    size_t n = 0;
    while (n < buf_.size() && is_ws(buf_[n])) ++n;
    const std::string_view rest = std::string_view(buf_).substr(n);
    if (rest.starts_with(kOpen)) {
      buf_.erase(0, n + kOpen.size());
      state_ = State::reasoning;
      strip_newlines_ = true;
    } else if (kOpen.starts_with(rest)) {
      return;  // whitespace so far, or the start of "<think>"
    } else {
      state_ = State::answer;
    }
  }
  if (strip_newlines_) {
    size_t n = 0;
    while (n < buf_.size() && buf_[n] == '\n') ++n;
    buf_.erase(0, n);
    if (buf_.empty()) return;
    strip_newlines_ = false;
  }
  if (state_ == State::answer) {
    answer += buf_;
    buf_.clear();
    return;
  }
  const size_t close = buf_.find(kClose);
  if (close != std::string::npos) {
    size_t end = close;
    while (end > 0 && buf_[end - 1] == '\n') --end;
    reasoning.append(buf_, 0, end);
    buf_.erase(0, close + kClose.size());
    state_ = State::answer;
    strip_newlines_ = true;
    run(reasoning, answer);
    return;
  }
  // Hold what may still turn out to be "\n...\n</think>".
  size_t keep = buf_.size();
  for (size_t n = std::min(kClose.size() - 1, buf_.size()); n > 0; --n)
    if (kClose.starts_with(std::string_view(buf_).substr(buf_.size() - n))) {
      keep = buf_.size() - n;
      break;
    }
  while (keep > 0 && buf_[keep - 1] == '\n') --keep;
  reasoning.append(buf_, 0, keep);
  buf_.erase(0, keep);
}

}  // namespace sy::server
