// Tool calls whose arguments are written as tagged text rather than JSON: Qwen3-Coder and
// Qwen3.5 (<function=NAME><parameter=P>...) and GLM-4.5/4.6 (NAME<arg_key>..<arg_value>..).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "server/parse/raw_call.hpp"
#include "server/parse/tool_blocks.hpp"

namespace sy::server {

/// Whether the start of a <tool_call> body can still be "<function=NAME>".
Viability qwen_xml_viable(std::string_view body);

/// The call in a Qwen3-Coder <tool_call> body: `<function=NAME>`, then for each argument
/// `<parameter=P>\nVALUE\n</parameter>` (one newline on each side belongs to the syntax, as
/// the template writes it), then `</function>`; whitespace between tags. Values are typed
/// with typed_value() against `tools`, Python spellings included (the template prints
/// scalars with str()). nullopt when the body is anything else.
std::optional<RawCalls> qwen_xml_call(std::string_view body, const nlohmann::json& tools);

/// Whether the start of a GLM <tool_call> body can still be a function name.
Viability glm_viable(std::string_view body);

/// The call in a GLM <tool_call> body: NAME, then pairs `<arg_key>K</arg_key>`
/// `<arg_value>V</arg_value>` separated by whitespace (the template writes strings bare and
/// other values as JSON); nullopt when the body is anything else.
std::optional<RawCalls> glm_call(std::string_view body, const nlohmann::json& tools);

}  // namespace sy::server
