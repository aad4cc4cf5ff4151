#include "server/parse/xml_calls.hpp"

#include "server/parse/param_types.hpp"

namespace sy::server {

namespace {

constexpr size_t kMaxName = 256;
constexpr std::string_view kFunction = "<function=";

// The text from `pos` up to `close`, and the position after `close`; nullopt when absent.
std::optional<std::pair<std::string_view, size_t>> until(std::string_view s, size_t pos, std::string_view close) {
  const size_t end = s.find(close, pos);
  if (end == std::string_view::npos) return std::nullopt;
  return std::pair{s.substr(pos, end - pos), end + close.size()};
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxName) return false;
  for (const char c : name)
    if (!is_name_char(c)) return false;
  return true;
}

// `<tag=NAME>` at pos: NAME and the position after '>'.
std::optional<std::pair<std::string_view, size_t>> named_tag(std::string_view s, size_t pos, std::string_view open) {
  if (!s.substr(pos).starts_with(open)) return std::nullopt;
  auto r = until(s, pos + open.size(), ">");
  if (!r || !valid_name(r->first)) return std::nullopt;
  return r;
}

}  // namespace

Viability qwen_xml_viable(std::string_view body) {
  const size_t p = skip_ws(body, 0);
  const std::string_view rest = body.substr(p);
  if (rest.size() <= kFunction.size()) return kFunction.starts_with(rest) ? Viability::undecided : Viability::no;
  if (!rest.starts_with(kFunction)) return Viability::no;
  const std::string_view name = rest.substr(kFunction.size());
  const size_t close = name.find('>');
  if (close == std::string_view::npos)
    return name.size() <= kMaxName && valid_name(name) ? Viability::undecided : Viability::no;
  return valid_name(name.substr(0, close)) ? Viability::yes : Viability::no;
}

std::optional<RawCalls> qwen_xml_call(std::string_view body, const nlohmann::json& tools) {
  const auto fn = named_tag(body, skip_ws(body, 0), kFunction);
  if (!fn) return std::nullopt;
  RawCall call{std::string(fn->first), nlohmann::ordered_json::object()};
  size_t pos = fn->second;
  for (;;) {
    pos = skip_ws(body, pos);
    if (body.substr(pos).starts_with("</function>")) {
      pos += std::string_view("</function>").size();
      break;
    }
    const auto param = named_tag(body, pos, "<parameter=");
    if (!param) return std::nullopt;
    const auto value = until(body, param->second, "</parameter>");
    if (!value) return std::nullopt;
    std::string_view v = value->first;
    if (v.starts_with('\n')) v.remove_prefix(1);
    if (v.ends_with('\n')) v.remove_suffix(1);
    const std::string key(param->first);
    call.arguments[key] = typed_value(v, declared_types(tools, call.name, key), true);
    pos = value->second;
  }
  if (skip_ws(body, pos) != body.size()) return std::nullopt;
  return RawCalls{std::move(call)};
}

Viability glm_viable(std::string_view body) {
  const size_t p = skip_ws(body, 0);
  const std::string_view rest = body.substr(p);
  const size_t end = rest.find_first_of("\n<");
  std::string_view name = rest.substr(0, end == std::string_view::npos ? rest.size() : end);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t' || name.back() == '\r')) name.remove_suffix(1);
  if (end != std::string_view::npos) return valid_name(name) ? Viability::yes : Viability::no;
  // Still reading the name: trailing blanks may yet be followed by the newline.
  return name.empty() || valid_name(name) ? Viability::undecided : Viability::no;
}

std::optional<RawCalls> glm_call(std::string_view body, const nlohmann::json& tools) {
  size_t pos = skip_ws(body, 0);
  const size_t end = body.find_first_of("\n<", pos);
  std::string_view name = body.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t' || name.back() == '\r')) name.remove_suffix(1);
  if (!valid_name(name)) return std::nullopt;
  RawCall call{std::string(name), nlohmann::ordered_json::object()};
  pos += name.size();
  for (;;) {
    pos = skip_ws(body, pos);
    if (pos == body.size()) break;
    if (!body.substr(pos).starts_with("<arg_key>")) return std::nullopt;
    const auto key = until(body, pos + std::string_view("<arg_key>").size(), "</arg_key>");
    if (!key || key->first.empty()) return std::nullopt;
    pos = skip_ws(body, key->second);
    if (!body.substr(pos).starts_with("<arg_value>")) return std::nullopt;
    const auto value = until(body, pos + std::string_view("<arg_value>").size(), "</arg_value>");
    if (!value) return std::nullopt;
    const std::string k(key->first);
    // GLM writes non-strings with tojson: no Python spellings.
    call.arguments[k] = typed_value(value->first, declared_types(tools, call.name, k), false);
    pos = value->second;
  }
  return RawCalls{std::move(call)};
}

}  // namespace sy::server
