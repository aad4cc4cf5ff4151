#include "server/parse/stream_parser.hpp"

#include "server/parse/tool_call_id.hpp"

namespace sy::server {

void apply_event(ParsedOutput& out, const ParseEvent& e) {
  switch (e.kind) {
    case EventKind::content:
      out.content += e.text;
      break;
    case EventKind::reasoning:
      out.reasoning_content += e.text;
      break;
    case EventKind::tool_call_start:
      if (out.tool_calls.size() <= e.index) out.tool_calls.resize(e.index + 1);
      out.tool_calls[e.index].id = e.id;
      out.tool_calls[e.index].name = e.name;
      break;
    case EventKind::tool_call_arguments:
      if (out.tool_calls.size() <= e.index) out.tool_calls.resize(e.index + 1);
      out.tool_calls[e.index].arguments += e.text;
      break;
  }
}

bool parses_tool_calls(const nlohmann::json& tool_choice) {
  return !(tool_choice.is_string() && tool_choice.get_ref<const std::string&>() == "none");
}

OutputParser::OutputParser(ParseOptions options)
    : options_(std::move(options)),
      splitter_(options_.parse_reasoning, options_.prompt_opens_reasoning),
      scanner_(options_.tool_format, std::make_shared<const nlohmann::json>(options_.tools)),
      harmony_(options_.parse_tool_calls, options_.parse_reasoning) {}

void OutputParser::add_text(EventKind kind, std::string text, std::vector<ParseEvent>& out) {
  if (text.empty()) return;
  if (!out.empty() && out.back().kind == kind) {
    out.back().text += text;
    return;
  }
  ParseEvent e;
  e.kind = kind;
  e.text = std::move(text);
  out.push_back(std::move(e));
}

void OutputParser::route(const std::string& reasoning, const std::string& answer, bool final,
                         std::vector<ParseEvent>& out) {
  add_text(EventKind::reasoning, reasoning_hold_.take(reasoning), out);
  // Reasoning never resumes once the answer began: its last bytes are final.
  if (!splitter_.in_reasoning()) add_text(EventKind::reasoning, reasoning_hold_.flush(), out);
  if (!options_.parse_tool_calls) {
    add_text(EventKind::content, content_hold_.take(answer), out);
    return;
  }
  std::vector<ScanItem> items;
  scanner_.push(answer, items);
  if (final) scanner_.finish(items);
  for (auto& item : items) {
    if (item.is_call) add_call(item.call, out);
    else add_text(EventKind::content, content_hold_.take(item.text), out);
  }
}

void OutputParser::route_harmony(std::vector<HarmonyItem>& items, std::vector<ParseEvent>& out) {
  for (auto& item : items) {
    switch (item.kind) {
      case HarmonyItem::Kind::reasoning:
        add_text(EventKind::reasoning, reasoning_hold_.take(item.text), out);
        break;
      case HarmonyItem::Kind::content:
        add_text(EventKind::content, content_hold_.take(item.text), out);
        break;
      case HarmonyItem::Kind::call:
        add_call(item.call, out);
        break;
    }
  }
}

void OutputParser::add_call(RawCall& call, std::vector<ParseEvent>& out) {
  ParseEvent start;
  start.kind = EventKind::tool_call_start;
  start.index = calls_;
  start.id = tool_call_id(options_.tool_format, options_.tool_call_id_prefix, calls_);
  start.name = std::move(call.name);
  out.push_back(std::move(start));
  ParseEvent args;
  args.kind = EventKind::tool_call_arguments;
  args.index = calls_;
  // A value read as text (qwen3_coder, glm45) may hold bytes that are not UTF-8.
  args.text = call.arguments.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  out.push_back(std::move(args));
  ++calls_;
}

std::vector<ParseEvent> OutputParser::push(std::string_view delta) {
  if (options_.tool_format == ToolFormat::harmony) {
    std::vector<HarmonyItem> items;
    harmony_.push(delta, items);
    std::vector<ParseEvent> out;
    route_harmony(items, out);
    return out;
  }
  std::string reasoning, answer;
  splitter_.push(delta, reasoning, answer);
  std::vector<ParseEvent> out;
  route(reasoning, answer, false, out);
  return out;
}

std::vector<ParseEvent> OutputParser::finish() {
  std::vector<ParseEvent> out;
  if (options_.tool_format == ToolFormat::harmony) {
    std::vector<HarmonyItem> items;
    harmony_.finish(items);
    route_harmony(items, out);
  } else {
    std::string reasoning, answer;
    splitter_.finish(reasoning, answer);
    route(reasoning, answer, true, out);
  }
  add_text(EventKind::reasoning, reasoning_hold_.flush(), out);
  add_text(EventKind::content, content_hold_.flush(), out);
  return out;
}

ParsedOutput parse_output(std::string_view text, const ParseOptions& options) {
  OutputParser parser(options);
  ParsedOutput out;
  for (const auto& e : parser.push(text)) apply_event(out, e);
  for (const auto& e : parser.finish()) apply_event(out, e);
  return out;
}

}  // namespace sy::server
