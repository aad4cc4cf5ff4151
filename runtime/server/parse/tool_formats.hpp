// The tool-call syntaxes chat templates teach their models, and which one a template uses.
#pragma once

#include <optional>
#include <string_view>

namespace sy::server {

enum class ToolFormat {
  hermes,       ///< <tool_call>{"name": ..., "arguments": {...}}</tool_call> (Qwen2.5, Qwen3, QwQ, Hermes)
  qwen3_coder,  ///< <tool_call><function=NAME><parameter=P>VALUE</parameter></function></tool_call> (Qwen3-Coder, Qwen3.5)
  llama3_json,  ///< {"name": ..., "parameters": {...}} (Llama 3.1-3.3), optionally after <|python_tag|>,
                ///< where Llama 3.1's built-in tools are NAME.call(key="value")
  mistral,      ///< [TOOL_CALLS][{...}] (Nemo) and [TOOL_CALLS]NAME[ARGS]{...} (Small 3.2)
  granite,      ///< <|tool_call|>[{"name": ..., "arguments": {...}}] (Granite 3.x)
  glm45,        ///< <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call> (GLM-4.5/4.6)
  kimi_k2,      ///< <|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{...}<|tool_call_end|>
  deepseek,     ///< <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜> (V3.1; R1's fenced form too)
  harmony,      ///< gpt-oss: messages to=functions.NAME on the commentary channel; reasoning on analysis
};

/// The format a chat template's text teaches (by the markers it writes); ToolFormat::hermes
/// when it shows none of them.
ToolFormat detect_tool_format(std::string_view template_source);

/// The format's name as written in configuration, e.g. "qwen3_coder".
std::string_view tool_format_name(ToolFormat format);

/// The format with that name, or nullopt.
std::optional<ToolFormat> tool_format_from_name(std::string_view name);

}  // namespace sy::server
