// Parameter values that a template wrote as bare text (Qwen3-Coder / Qwen3.5 <parameter=P>,
// GLM <arg_value>) carry no JSON type of their own: "42" may be the number or the string.
// The request's JSON schema for the parameter decides; without one, text that is valid JSON
// is that JSON value and anything else is a string.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace sy::server {

/// The JSON-schema types that the request's `tools` (OpenAI's array of {"type": "function",
/// "function": {...}}) declare for parameter `param` of function `function`: the "type"
/// string or array, or "string" for an "enum" of strings; empty when not declared.
std::vector<std::string> declared_types(const nlohmann::json& tools, std::string_view function,
                                        std::string_view param);

/// The value `text` stands for, given the declared types: a type that the text does not fit
/// is skipped, and "string" is the last resort when declared; without a fitting type, valid
/// JSON is that value and anything else a string. `python_literals`: the template printed
/// scalars with Python's str() (Qwen3-Coder), so True, False and None are the boolean and
/// null values (when declared, or when nothing is declared).
nlohmann::ordered_json typed_value(std::string_view text, const std::vector<std::string>& types,
                                   bool python_literals);

}  // namespace sy::server
