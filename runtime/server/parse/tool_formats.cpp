#include "server/parse/tool_formats.hpp"

#include <array>
#include <utility>

namespace sy::server {

namespace {

constexpr std::array<std::pair<ToolFormat, std::string_view>, 9> kNames{{
    {ToolFormat::hermes, "hermes"},
    {ToolFormat::qwen3_coder, "qwen3_coder"},
    {ToolFormat::llama3_json, "llama3_json"},
    {ToolFormat::mistral, "mistral"},
    {ToolFormat::granite, "granite"},
    {ToolFormat::glm45, "glm45"},
    {ToolFormat::kimi_k2, "kimi_k2"},
    {ToolFormat::deepseek, "deepseek"},
    {ToolFormat::harmony, "harmony"},
}};

bool has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

}  // namespace

ToolFormat detect_tool_format(std::string_view t) {
  // Most specific first: GLM and Qwen3-Coder also write <tool_call>, and the Llama check
  // looks for the instruction it gives, which no other template repeats.
  if (has(t, "<|channel|>") && has(t, "<|message|>")) return ToolFormat::harmony;
  if (has(t, "<|tool_call_begin|>")) return ToolFormat::kimi_k2;
  if (has(t, "<｜tool▁call▁begin｜>")) return ToolFormat::deepseek;
  if (has(t, "<arg_key>")) return ToolFormat::glm45;
  if (has(t, "<function=") && has(t, "<parameter=")) return ToolFormat::qwen3_coder;
  if (has(t, "[TOOL_CALLS]")) return ToolFormat::mistral;
  if (has(t, "<|tool_call|>")) return ToolFormat::granite;
  if (has(t, "<tool_call>")) return ToolFormat::hermes;
  if (has(t, "<|python_tag|>") || (has(t, "<|start_header_id|>") && has(t, "\"parameters\": ")))
    return ToolFormat::llama3_json;
  return ToolFormat::hermes;
}

std::string_view tool_format_name(ToolFormat format) {
  for (const auto& [f, name] : kNames)
    if (f == format) return name;
  return "hermes";
}

std::optional<ToolFormat> tool_format_from_name(std::string_view name) {
  for (const auto& [f, n] : kNames)
    if (n == name) return f;
  return std::nullopt;
}

}  // namespace sy::server
