#include "server/parse/python_tag.hpp"

namespace sy::server {

namespace {

// Built-in calls are short (a search query); a longer one is not taken for one.
constexpr size_t kMaxBuiltin = 16384;

bool ident(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

std::optional<RawCalls> object_call(const nlohmann::ordered_json& v, const std::string&) {
  if (!v.is_object()) return std::nullopt;
  auto c = call_from_object(v);
  if (!c) return std::nullopt;
  return RawCalls{std::move(*c)};
}

}  // namespace

BlockScan builtin_tool_call(std::string_view s, bool final) {
  const BlockScan more{final ? BlockScan::Kind::invalid : BlockScan::Kind::more, 0, {}};
  const BlockScan invalid{BlockScan::Kind::invalid, 0, {}};
  if (s.size() > kMaxBuiltin) return invalid;
  const size_t n = s.size();
  size_t i = 0;
  const auto identifier = [&] {
    const size_t from = i;
    while (i < n && ident(s[i])) ++i;
    return s.substr(from, i - from);
  };
  const auto skip_spaces = [&] {
    while (i < n && s[i] == ' ') ++i;
  };
  RawCall call{std::string(identifier()), nlohmann::ordered_json::object()};
  if (i == n) return more;
  if (call.name.empty()) return invalid;
  constexpr std::string_view kCall = ".call(";
  const std::string_view rest = s.substr(i);
  if (rest.size() < kCall.size()) return kCall.starts_with(rest) ? more : invalid;
  if (!rest.starts_with(kCall)) return invalid;
  i += kCall.size();
  skip_spaces();
  if (i == n) return more;
  if (s[i] != ')') {
    for (;;) {
      const std::string key(identifier());
      if (i == n) return more;
      if (key.empty() || s[i] != '=') return invalid;
      if (++i == n) return more;
      if (s[i] != '"') return invalid;
      const size_t close = s.find('"', i + 1);
      if (close == std::string_view::npos) return more;
      call.arguments[key] = std::string(s.substr(i + 1, close - i - 1));
      i = close + 1;
      skip_spaces();
      if (i == n) return more;
      if (s[i] == ')') break;
      if (s[i] != ',') return invalid;
      ++i;
      skip_spaces();
    }
  }
  return {BlockScan::Kind::complete, i + 1, RawCalls{std::move(call)}};
}

BlockScan PythonTagReader::scan(std::string_view text, bool final) {
  if (!json_) {
    const size_t p = skip_ws(text, marker_);
    if (p == text.size()) return {final ? BlockScan::Kind::invalid : BlockScan::Kind::more, 0, {}};
    if (text[p] != '{') {
      BlockScan r = builtin_tool_call(text.substr(p), final);
      r.length += p;
      return r;
    }
    json_ = std::make_unique<JsonBlockReader>(marker_, nullptr, "", object_call);
  }
  return json_->scan(text, final);
}

}  // namespace sy::server
