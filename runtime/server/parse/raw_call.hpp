// A tool call as read from the model's text, before it gets its id and its arguments are
// written out: what every format's reader produces.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sy::server {

struct RawCall {
  std::string name;
  nlohmann::ordered_json arguments;  ///< always an object
};

using RawCalls = std::vector<RawCall>;

/// The arguments as a JSON object: an object as is, a string that holds a JSON object
/// (some models write the arguments encoded), null or missing as {}; nullopt otherwise.
std::optional<nlohmann::ordered_json> arguments_object(const nlohmann::ordered_json* value);

/// A call written as a JSON object {"name": ..., "arguments" or "parameters": {...}} (other
/// keys such as "id" or "type" are ignored); nullopt when it is not one.
std::optional<RawCall> call_from_object(const nlohmann::ordered_json& object);

/// Calls written as one such object or as an array of them (Mistral Nemo, Granite);
/// nullopt when any element is not a call or the array is empty.
std::optional<RawCalls> calls_from_json(const nlohmann::ordered_json& value);

/// A function name as models write it: letters, digits, '_', '-', '.', ':' (no spaces).
bool is_name_char(char c);

}  // namespace sy::server
