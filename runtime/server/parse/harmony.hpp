// gpt-oss's harmony format: the output is a sequence of messages, each a header up to
// <|message|> (channel, optional recipient) and a body up to <|end|>, <|call|> or
// <|return|>. The analysis channel is the reasoning, the final channel (and commentary
// addressed to no one) the content, and a message addressed to functions.NAME a call:
//   <|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…
//   <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{…}<|call|>
// (the template writes the recipient before the channel; the model may write it after).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/parse/raw_call.hpp"

namespace sy::server {

struct HarmonyItem {
  enum class Kind { reasoning, content, call };
  Kind kind = Kind::content;
  std::string text;
  RawCall call;
};

/// Streams a harmony output (starting right after the prompt's "<|start|>assistant").
/// Reasoning and content bodies are released as they come; a call's body is held until the
/// message ends, and one that is not a JSON object is released as content. An output that
/// does not start like a header (special tokens not decoded) is all content.
class HarmonyParser {
 public:
  HarmonyParser(bool parse_tool_calls, bool parse_reasoning)
      : calls_(parse_tool_calls), reasoning_(parse_reasoning) {}

  /// Adds output text; appends what is decided to `out`.
  void push(std::string_view text, std::vector<HarmonyItem>& out);
  /// The output ended: decides everything held.
  void finish(std::vector<HarmonyItem>& out);

 private:
  enum class State { header, body, raw };
  void run(bool final, std::vector<HarmonyItem>& out);
  void start_body(std::string_view header);
  void end_body(std::vector<HarmonyItem>& out);
  void emit(HarmonyItem::Kind kind, std::string_view text, std::vector<HarmonyItem>& out);

  bool calls_;
  bool reasoning_;
  State state_ = State::header;
  std::string buf_;
  HarmonyItem::Kind body_kind_ = HarmonyItem::Kind::content;
  std::string call_name_;  // non-empty: the body is this function's arguments
  std::string call_body_;
};

}  // namespace sy::server
