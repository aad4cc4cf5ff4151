#include "server/parse/token_calls.hpp"

namespace sy::server {

namespace {

constexpr size_t kMaxName = 256;

std::string_view trim(std::string_view s) {
  const size_t b = skip_ws(s, 0);
  s.remove_prefix(b);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool plain_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxName) return false;
  for (const char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

std::optional<RawCalls> one_call(std::string_view name, std::string_view json) {
  if (!plain_name(name)) return std::nullopt;
  const auto value = nlohmann::ordered_json::parse(json.begin(), json.end(), nullptr, false);
  if (value.is_discarded()) return std::nullopt;
  auto args = arguments_object(&value);
  if (!args || value.is_null()) return std::nullopt;
  return RawCalls{RawCall{std::string(name), std::move(*args)}};
}

}  // namespace

std::optional<RawCalls> kimi_call(std::string_view body) {
  constexpr std::string_view kArgs = "<|tool_call_argument_begin|>";
  const size_t sep = body.find(kArgs);
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view id = trim(body.substr(0, sep));
  if (id.starts_with("functions.")) id.remove_prefix(std::string_view("functions.").size());
  const size_t colon = id.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < id.size() &&
      id.find_first_not_of("0123456789", colon + 1) == std::string_view::npos)
    id = id.substr(0, colon);
  return one_call(id, body.substr(sep + kArgs.size()));
}

std::optional<RawCalls> deepseek_call(std::string_view body) {
  constexpr std::string_view kSep = "<｜tool▁sep｜>";
  const size_t sep = body.find(kSep);
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view left = trim(body.substr(0, sep));
  const std::string_view right = body.substr(sep + kSep.size());
  const size_t first = skip_ws(right, 0);
  // The template writes arguments with tojson, so arguments that came as a JSON string come
  // back quoted.
  if (first < right.size() && (right[first] == '{' || right[first] == '"')) return one_call(left, right);
  // R1: the type before the separator, then the name alone on its line, then a fenced object.
  const size_t nl = right.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  std::string_view fenced = trim(right.substr(nl + 1));
  if (!fenced.starts_with("```json") || !fenced.ends_with("```") || fenced.size() < 10) return std::nullopt;
  fenced = fenced.substr(7, fenced.size() - 10);
  return one_call(trim(right.substr(0, nl)), fenced);
}

HeaderScan mistral_header(std::string_view s, bool final) {
  constexpr std::string_view kArgs = "[ARGS]";
  constexpr std::string_view kCallId = "[CALL_ID]";
  const auto more = [&] { return HeaderScan{final ? HeaderScan::Kind::invalid : HeaderScan::Kind::more, 0, {}}; };
  const HeaderScan invalid{HeaderScan::Kind::invalid, 0, {}};
  const size_t start = skip_ws(s, 0);
  if (start == s.size()) return more();
  if (s[start] == '[') return {HeaderScan::Kind::ok, start, {}};  // Nemo: a JSON array
  size_t pos = start;
  while (pos < s.size() && is_name_char(s[pos])) ++pos;
  const std::string_view name = s.substr(start, pos - start);
  if (name.size() > kMaxName) return invalid;
  if (pos == s.size()) return more();
  if (name.empty() || s[pos] != '[') return invalid;
  std::string_view rest = s.substr(pos);
  if (rest.starts_with(kCallId)) {
    // Any bytes up to the next '[' (the template only checks that an id is 9 characters long).
    size_t id_end = pos + kCallId.size();
    while (id_end < s.size() && id_end - pos - kCallId.size() <= 64 && s[id_end] != '[') ++id_end;
    if (id_end - pos - kCallId.size() > 64) return invalid;
    if (id_end == s.size()) return more();
    pos = id_end;
    rest = s.substr(pos);
  } else if (rest.size() < kCallId.size() && kCallId.starts_with(rest) && !kArgs.starts_with(rest)) {
    return more();
  }
  if (rest.size() < kArgs.size()) return kArgs.starts_with(rest) || kCallId.starts_with(rest) ? more() : invalid;
  if (!rest.starts_with(kArgs)) return invalid;
  return {HeaderScan::Kind::ok, pos + kArgs.size(), std::string(name)};
}

}  // namespace sy::server
