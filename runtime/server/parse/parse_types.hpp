// What the model-output parsers produce, in the shape of OpenAI's chat completion message:
// reasoning_content, content and tool_calls, whole or as stream events.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sy::server {

/// One function call the model made.
struct ToolCall {
  std::string id;         ///< tool_calls[i].id, see tool_call_id()
  std::string name;       ///< tool_calls[i].function.name
  std::string arguments;  ///< tool_calls[i].function.arguments: a JSON object as compact text
  bool operator==(const ToolCall&) const = default;
};

/// A whole output, split.
struct ParsedOutput {
  std::string reasoning_content;  ///< the thinking; empty when there was none
  std::string content;            ///< the answer; empty when the model only called tools
  std::vector<ToolCall> tool_calls;
  bool operator==(const ParsedOutput&) const = default;
};

enum class EventKind {
  content,              ///< `text` continues content
  reasoning,            ///< `text` continues reasoning_content
  tool_call_start,      ///< a new tool call: `index`, `id`, `name`
  tool_call_arguments,  ///< `text` continues the arguments of tool call `index`
};

/// One streamed delta.
struct ParseEvent {
  EventKind kind = EventKind::content;
  std::string text;
  size_t index = 0;
  std::string id;
  std::string name;
  bool operator==(const ParseEvent&) const = default;
};

/// Adds one event to `out`: what a client assembling the deltas ends up with.
void apply_event(ParsedOutput& out, const ParseEvent& event);

}  // namespace sy::server
