// JSON as printed by every --json output. Strings reach it from model files, tokens and
// paths, none of which need be UTF-8; nlohmann's dump() throws on such a string. Every
// string (keys included) is written with sy::escape_invalid_utf8 first, the documented
// \xNN escaping (Python's backslashreplace), so the output is always valid JSON and says
// the same as inspect's text output; strings that are UTF-8 already are unchanged.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "switchyard/utf8.hpp"

namespace sy::cli {
namespace detail {

template <class Json>
bool has_invalid_utf8(const Json& j) {
  if (j.is_string()) return first_invalid_utf8(j.template get_ref<const typename Json::string_t&>()).has_value();
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (first_invalid_utf8(it.key()) || has_invalid_utf8(it.value())) return true;
    return false;
  }
  if (j.is_array()) {
    for (const auto& v : j)
      if (has_invalid_utf8(v)) return true;
  }
  return false;
}

// A copy of `j` with every string escaped; only made when has_invalid_utf8() said so.
template <class Json>
Json escaped(const Json& j) {
  if (j.is_string()) return Json(escape_invalid_utf8(j.template get_ref<const typename Json::string_t&>()));
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[escape_invalid_utf8(it.key())] = escaped(it.value());
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const auto& v : j) out.push_back(escaped(v));
    return out;
  }
  return j;
}

}  // namespace detail

/// `j` as text (indent < 0: one line), every byte that is not UTF-8 written as \xNN;
/// never throws on such bytes.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  // Two keys that differ only in invalid bytes could collide once escaped ("\xff" the byte
  // and "\\xff" the four characters); the later one wins, as it would in Python's json.
  if (detail::has_invalid_utf8(j)) return detail::escaped(j).dump(indent);
  return j.dump(indent);
}

}  // namespace sy::cli
