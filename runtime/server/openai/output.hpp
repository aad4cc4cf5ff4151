// How a chat answer's raw text becomes OpenAI's message fields: reasoning split out of
// <think>...</think>, tool calls parsed from the template's format. Deltas come out as the
// text streams in; finish() ends the answer. A completion's text passes through unchanged.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
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
struct ChatOutputOptions {
  std::string template_source;  ///< the chat template: which tool-call syntax the model writes
  std::string prompt_text;      ///< the rendered prompt: an answer may start inside its open <think>
  nlohmann::json tools;         ///< the request's tools (null: no tool calls are parsed)
  std::string call_id_prefix;   ///< tool call ids are this plus a counter
};

/// A chat answer: reasoning split out of <think>, and with tools, tool calls parsed in the
/// template's format (server/parse).
std::unique_ptr<OutputShaper> chat_output(const ChatOutputOptions& o);

}  // namespace sy::server::openai
