#include "server/parse/format_markers.hpp"

#include "server/parse/python_tag.hpp"
#include "server/parse/token_calls.hpp"
#include "server/parse/xml_calls.hpp"

namespace sy::server {

namespace {

constexpr std::string_view kPythonTag = "<|python_tag|>";

std::optional<RawCalls> single_object(const nlohmann::ordered_json& v, const std::string&) {
  if (!v.is_object()) return std::nullopt;
  auto c = call_from_object(v);
  if (!c) return std::nullopt;
  return RawCalls{std::move(*c)};
}

std::optional<RawCalls> object_or_array(const nlohmann::ordered_json& v, const std::string&) {
  return calls_from_json(v);
}

std::optional<RawCalls> mistral_calls(const nlohmann::ordered_json& v, const std::string& name) {
  if (name.empty()) return v.is_array() ? calls_from_json(v) : std::nullopt;
  // Small 3.2's template writes arguments with tojson: a string when they came as one.
  auto args = v.is_null() ? std::nullopt : arguments_object(&v);
  if (!args) return std::nullopt;
  return RawCalls{RawCall{name, std::move(*args)}};
}

BlockMarker json_marker(std::string marker, HeaderFn header, std::string trailer, JsonCallsFn to_calls) {
  const size_t n = marker.size();
  return {std::move(marker), [=] { return std::make_unique<JsonBlockReader>(n, header, trailer, to_calls); }};
}

BlockMarker delimited_marker(std::string marker, std::string close, ViableFn viable, BodyFn body) {
  const size_t n = marker.size();
  return {std::move(marker), [=] { return std::make_unique<DelimitedBlockReader>(n, close, viable, body); }};
}

}  // namespace

FormatMarkers format_markers(ToolFormat format, std::shared_ptr<const nlohmann::json> tools) {
  if (!tools) tools = std::make_shared<const nlohmann::json>();
  FormatMarkers m;
  switch (format) {
    case ToolFormat::hermes:
      m.markers.push_back(json_marker("<tool_call>", nullptr, "</tool_call>", single_object));
      break;
    case ToolFormat::qwen3_coder:
      m.markers.push_back(delimited_marker("<tool_call>", "</tool_call>", qwen_xml_viable,
                                           [tools](std::string_view b) { return qwen_xml_call(b, *tools); }));
      break;
    case ToolFormat::glm45:
      m.markers.push_back(delimited_marker("<tool_call>", "</tool_call>", glm_viable,
                                           [tools](std::string_view b) { return glm_call(b, *tools); }));
      break;
    case ToolFormat::llama3_json:
      m.markers.push_back({std::string(kPythonTag), [] { return std::make_unique<PythonTagReader>(kPythonTag.size()); }});
      m.leading_json = [] { return std::make_unique<JsonBlockReader>(0, nullptr, "", single_object); };
      break;
    case ToolFormat::mistral:
      m.markers.push_back(json_marker("[TOOL_CALLS]", mistral_header, "", mistral_calls));
      break;
    case ToolFormat::granite:
      m.markers.push_back(json_marker("<|tool_call|>", nullptr, "", object_or_array));
      break;
    case ToolFormat::kimi_k2:
      m.markers.push_back({"<|tool_calls_section_begin|>", nullptr});
      m.markers.push_back({"<|tool_calls_section_end|>", nullptr});
      m.markers.push_back(delimited_marker("<|tool_call_begin|>", "<|tool_call_end|>", nullptr, kimi_call));
      break;
    case ToolFormat::deepseek:
      m.markers.push_back({"<｜tool▁calls▁begin｜>", nullptr});
      m.markers.push_back({"<｜tool▁calls▁end｜>", nullptr});
      m.markers.push_back(delimited_marker("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", nullptr, deepseek_call));
      break;
    case ToolFormat::harmony:
      break;  // harmony is read message by message (harmony.hpp), not by markers
  }
  return m;
}

}  // namespace sy::server
