// The model-output parser an OpenAI-compatible server streams through: generated text in,
// reasoning / content / tool-call deltas out. Streaming and parsing the whole output at
// once give the same result however the text is cut.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/parse/harmony.hpp"
#include "server/parse/parse_types.hpp"
#include "server/parse/reasoning.hpp"
#include "server/parse/tool_formats.hpp"
#include "server/parse/tool_scanner.hpp"
#include "server/parse/utf8_hold.hpp"

namespace sy::server {

struct ParseOptions {
  /// The model's tool-call syntax, usually detect_tool_format(chat template).
  ToolFormat tool_format = ToolFormat::hermes;
  /// False: no tool calls are looked for (tool_choice "none", or a request without tools).
  bool parse_tool_calls = true;
  /// False: <think> is not looked for and everything that is not a tool call is content.
  bool parse_reasoning = true;
  /// The prompt ended inside an open <think> (see prompt_opens_reasoning()); not used by
  /// ToolFormat::harmony, whose reasoning is a channel.
  bool prompt_opens_reasoning = false;
  /// Tool call ids are tool_call_id(tool_format, prefix, n), e.g. "call_<request id>_".
  std::string tool_call_id_prefix = "call_";
  /// The request's `tools` array (or null): its parameter schemas type the values of the
  /// formats that write arguments as text (qwen3_coder, glm45).
  nlohmann::json tools;
};

/// False when `tool_choice` (the request field, absent = null) is "none"; "auto",
/// "required" and a named function all ask for tool calls to be parsed (whether the model
/// complied is checked elsewhere).
bool parses_tool_calls(const nlohmann::json& tool_choice);

/// Streaming parser for one output. Text that may still become a tag, a tool-call block
/// until it is complete, and an unfinished UTF-8 character are held back. A tool call is
/// released whole, as a tool_call_start event and one tool_call_arguments event, once its
/// block is complete: a block that turns out not to be a call (malformed JSON, a cut-off
/// output) is released as content instead, exactly as parse_output() would decide.
class OutputParser {
 public:
  explicit OutputParser(ParseOptions options);

  /// Parses the next piece of generated text; returns the events it decides (maybe none).
  std::vector<ParseEvent> push(std::string_view delta);
  /// The output ended: returns the events for everything still held.
  std::vector<ParseEvent> finish();

 private:
  void route(const std::string& reasoning, const std::string& answer, bool final, std::vector<ParseEvent>& out);
  void route_harmony(std::vector<HarmonyItem>& items, std::vector<ParseEvent>& out);
  void add_text(EventKind kind, std::string text, std::vector<ParseEvent>& out);
  void add_call(RawCall& call, std::vector<ParseEvent>& out);

  ParseOptions options_;
  ReasoningSplitter splitter_;
  ToolCallScanner scanner_;
  HarmonyParser harmony_;
  Utf8Hold reasoning_hold_;
  Utf8Hold content_hold_;
  size_t calls_ = 0;
};

/// Parses a whole output (the same as one push() and finish(), folded with apply_event()).
ParsedOutput parse_output(std::string_view text, const ParseOptions& options);

}  // namespace sy::server
