// Splitting <think>...</think> off the start of an output (Qwen3, QwQ, DeepSeek-R1, SmolLM3,
// GLM, Qwen3.5). Templates whose generation prompt already ends with "<think>" make the
// output start inside the thinking, with no opening tag.
#pragma once

#include <string>
#include <string_view>

namespace sy::server {

/// True when the rendered prompt ends with an open "<think>" (trailing whitespace aside), so
/// that the output starts inside the reasoning.
bool prompt_opens_reasoning(std::string_view prompt);

/// Streams an output into reasoning and answer text. Reasoning is what comes before
/// "</think>" when the output starts with "<think>" (after whitespace) or when the prompt
/// opened it; everything else is the answer. Newlines next to the tags are dropped, as the
/// templates drop them when they read a reasoning_content back ("<think>\n" ...
/// "\n</think>\n\n"). Reasoning that is never closed stays reasoning.
class ReasoningSplitter {
 public:
  /// `enabled` false passes everything through as answer.
  ReasoningSplitter(bool enabled, bool starts_in_reasoning);

  /// Adds output text; appends to `reasoning` and then to `answer` what is decided.
  void push(std::string_view text, std::string& reasoning, std::string& answer);
  /// The output ended: releases everything held.
  void finish(std::string& reasoning, std::string& answer);
  /// True while the reasoning may still continue.
  [[nodiscard]] bool in_reasoning() const { return state_ != State::answer; }

 private:
  enum class State { before, reasoning, answer };
  void run(std::string& reasoning, std::string& answer);

  State state_;
  std::string buf_;
  bool strip_newlines_;  // drop '\n' at the start of the current part
};

}  // namespace sy::server
