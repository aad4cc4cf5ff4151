// JSON as printed by every --json output. Strings reach it from model files, tokens and
// paths, none of which need be UTF-8; nlohmann's dump() throws on such a string, so the
// outputs that build their strings with sy::escape_invalid_utf8 (the documented \xNN
// escaping) print through here too, and any byte that still slips through becomes U+FFFD
// instead of ending the process.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sy::cli {

/// `j` as text (indent < 0: one line); never throws on bytes that are not UTF-8.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace sy::cli
