// How a chat answer's raw text becomes OpenAI's message fields: reasoning split out of
// <think>...</think>, tool calls parsed from the template's format. Deltas come out as the
// text streams in; finish() ends the answer. A completion's text passes through unchanged.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sy::server::openai {

struct OutputDelta {
  std::string content;
  std::string reasoning;
  int tool_index = -1;    ///< a tool-call delta when >= 0
  std::string tool_id;    ///< first delta of a call: its id and name
  std::string tool_name;
  std::string tool_arguments;  ///< a piece of the arguments' JSON text
};

class OutputShaper {
 public:
  virtual ~OutputShaper() = default;
  /// Deltas for newly generated text.
  virtual std::vector<OutputDelta> push(std::string_view text) = 0;
  /// Deltas for what was held back, at the end.
  virtual std::vector<OutputDelta> finish() = 0;
  /// True once any tool call was produced.
  [[nodiscard]] virtual bool has_tool_calls() const { return false; }
};

/// Text as content, unchanged.
std::unique_ptr<OutputShaper> plain_output();
/// A chat answer to a prompt rendered as `prompt_text` (an answer may start inside a
/// <think> block the prompt opened); with `tools`, tool calls are parsed.
std::unique_ptr<OutputShaper> chat_output(const std::string& prompt_text, bool tools);

}  // namespace sy::server::openai
