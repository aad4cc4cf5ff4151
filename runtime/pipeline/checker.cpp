#include "pipeline/checker.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "util/parse_number.hpp"
#include "util/suggest.hpp"

namespace sy::pipeline {

std::string number_text(double v) {
  if (std::nearbyint(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string range_phrase(std::optional<double> min, std::optional<double> max, bool min_exclusive) {
  if (min && max && min_exclusive) return "greater than " + number_text(*min) + " and at most " + number_text(*max);
  if (min && max) return "between " + number_text(*min) + " and " + number_text(*max);
  if (min && min_exclusive) return "greater than " + number_text(*min);
  if (min) return "at least " + number_text(*min);
  if (max) return "at most " + number_text(*max);
  return "a number";
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::optional<double> parse_double(const std::string& s) {
  const auto v = util::parse_finite(s);
  if (!v.ok()) return std::nullopt;
  return v.value;
}

// What YAML's core schema reads an unquoted scalar as when it is not a string:
// "the number 5", "the boolean true"; empty for a string.
std::string yaml_non_string(const std::string& s) {
  static const std::regex kNumber(
      R"([-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))");
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE")
    return "the boolean " + s;
  if (s == "null" || s == "Null" || s == "NULL" || s == "~") return "null";
  if (std::regex_match(s, kNumber)) return "the number " + s;
  return {};
}

// The pattern's full-match verdict; a pattern std::regex cannot compile matches nothing
// (manifests are checked when read, so only a descriptor used directly can have one).
bool matches(const std::string& pattern, const std::string& value) {
  try {
    return std::regex_match(value, std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error&) {
    return false;
  }
}

}  // namespace

std::optional<std::string> Checker::path_text(const Node& n, const std::string& path, const std::string& expected) {
  seen(path, n.loc);
  if (n.kind == Node::Kind::scalar && n.quoted) return n.scalar;
  const std::string other = n.kind == Node::Kind::scalar ? yaml_non_string(n.scalar) : "";
  if (n.kind == Node::Kind::scalar && other.empty()) return n.scalar;
  std::string msg = "'" + path + "' must be " + expected + "; got ";
  if (n.kind != Node::Kind::scalar)
    msg += n.kind == Node::Kind::null ? "nothing" : n.describe();
  else
    msg += other + " (quote it if a file is really called " + n.scalar + ")";
  error(n.loc, msg);
  return std::nullopt;
}

bool Checker::string_matches(const ParamSpec& spec, const Node& n, const std::string& value, const std::string& path) {
  if (spec.pattern.empty() || matches(spec.pattern, value)) return true;
  const std::string shape =
      spec.pattern_hint.empty() ? "text matching the regular expression '" + spec.pattern + "'" : spec.pattern_hint;
  error(n.loc, "'" + path + "' must be " + shape + ", got '" + value + "'");
  return false;
}

void Checker::check_keys(const Node& map, const std::string& section, const std::vector<std::string>& allowed) {
  for (const auto& e : map.entries) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == e.key;
    if (ok) continue;
    std::string msg = section.empty() ? "unknown top-level key '" + e.key + "'"
                                      : "unknown key '" + e.key + "' in '" + section + "'";
    if (auto s = closest(e.key, allowed))
      msg += "; did you mean '" + *s + "'?";
    else
      msg += "; valid keys: " + join(allowed);
    error(e.key_loc, msg);
  }
}

void Checker::require(const Node& map, const std::string& section, const std::string& key) {
  if (map.get(key)) return;
  error(map.loc, "missing required key '" + key + "' in '" + section + "'");
}

bool Checker::is_map(const Node& n, const std::string& path, const std::string& example) {
  seen(path, n.loc);
  if (n.kind == Node::Kind::map) return true;
  error(n.loc, "'" + path + "' must be a mapping" + (example.empty() ? "" : " such as " + example) + ", got " +
                   n.describe());
  return false;
}

bool Checker::is_list(const Node& n, const std::string& path, const std::string& example) {
  seen(path, n.loc);
  if (n.kind == Node::Kind::list) return true;
  error(n.loc, "'" + path + "' must be a list" + (example.empty() ? "" : " such as " + example) + ", got " +
                   n.describe());
  return false;
}

std::optional<bool> Checker::boolean(const Node& n, const std::string& path) {
  seen(path, n.loc);
  if (n.kind == Node::Kind::scalar && !n.quoted) {
    if (n.scalar == "true" || n.scalar == "True" || n.scalar == "TRUE") return true;
    if (n.scalar == "false" || n.scalar == "False" || n.scalar == "FALSE") return false;
  }
  error(n.loc, "'" + path + "' must be true or false, got " + n.describe());
  return std::nullopt;
}

std::optional<int64_t> Checker::integer(const Node& n, const std::string& path, std::optional<double> min,
                                        std::optional<double> max, const std::vector<std::string>& keywords,
                                        std::string* keyword) {
  seen(path, n.loc);
  if (n.kind == Node::Kind::scalar) {
    for (const auto& k : keywords)
      if (n.scalar == k) {
        if (keyword) *keyword = k;
        return 0;
      }
    const auto v = util::parse_integer<int64_t>(n.scalar);
    // An integer past int64_t is out of any range a key has: say the range, as for 17 > 16.
    if (v.error == util::NumberError::out_of_range) {
      error(n.loc, "'" + path + "' must be " +
                       (min || max ? range_phrase(min, max) : "an integer that fits in 64 bits") + ", got " + n.scalar);
      return std::nullopt;
    }
    if (v.ok()) {
      if ((min && static_cast<double>(v.value) < *min) || (max && static_cast<double>(v.value) > *max)) {
        error(n.loc, "'" + path + "' must be " + range_phrase(min, max) + ", got " + n.scalar);
        return std::nullopt;
      }
      return v.value;
    }
  }
  std::string expected = "an integer";
  for (size_t i = 0; i < keywords.size(); ++i)
    expected += (i + 1 == keywords.size() ? " or '" : ", '") + keywords[i] + "'";
  std::string msg = "'" + path + "' must be " + expected + ", got " + n.describe();
  if (n.kind == Node::Kind::scalar && !keywords.empty())
    if (auto s = closest(n.scalar, keywords)) msg += "; did you mean '" + *s + "'?";
  error(n.loc, msg);
  return std::nullopt;
}

std::optional<double> Checker::number(const Node& n, const std::string& path, std::optional<double> min,
                                      std::optional<double> max, bool min_exclusive) {
  seen(path, n.loc);
  if (n.kind == Node::Kind::scalar)
    if (auto v = parse_double(n.scalar)) {
      const bool below = min && (min_exclusive ? *v <= *min : *v < *min);
      if (below || (max && *v > *max)) {
        error(n.loc, "'" + path + "' must be " + range_phrase(min, max, min_exclusive) + ", got " + n.scalar);
        return std::nullopt;
      }
      return v;
    }
  error(n.loc, "'" + path + "' must be a number, got " + n.describe());
  return std::nullopt;
}

std::optional<std::string> Checker::string(const Node& n, const std::string& path) {
  seen(path, n.loc);
  if (n.kind == Node::Kind::scalar) return n.scalar;
  error(n.loc, "'" + path + "' must be a string, got " + n.describe());
  return std::nullopt;
}

std::optional<std::string> Checker::choice(const Node& n, const std::string& path,
                                           const std::vector<std::string>& choices) {
  seen(path, n.loc);
  if (n.kind == Node::Kind::scalar)
    for (const auto& c : choices)
      if (n.scalar == c) return c;
  std::string msg = "'" + path + "' must be one of " + join(choices) + "; got " + n.describe();
  if (n.kind == Node::Kind::scalar)
    if (auto s = closest(n.scalar, choices)) msg += "; did you mean '" + *s + "'?";
  error(n.loc, msg);
  return std::nullopt;
}

std::optional<ParamValue> Checker::param(const ParamSpec& spec, const Node& n, const std::string& path) {
  seen(path, n.loc);
  switch (spec.type) {
    case ParamType::boolean:
      if (auto b = boolean(n, path)) return ParamValue(*b);
      return std::nullopt;
    case ParamType::integer: {
      std::string kw;
      auto v = integer(n, path, spec.min, spec.max, spec.choices, &kw);
      if (!v) return std::nullopt;
      if (!kw.empty()) return ParamValue(kw);
      return ParamValue(*v);
    }
    case ParamType::number:
      if (auto v = number(n, path, spec.min, spec.max, spec.min_exclusive)) return ParamValue(*v);
      return std::nullopt;
    case ParamType::string:
      if (!spec.choices.empty()) {
        if (auto c = choice(n, path, spec.choices)) return ParamValue(*c);
        return std::nullopt;
      }
      if (auto s = string(n, path); s && string_matches(spec, n, *s, path)) return ParamValue(*s);
      return std::nullopt;
    case ParamType::integer_list: {
      // A single integer is accepted as a list of one ("devices: 0").
      std::vector<int64_t> out;
      if (n.kind == Node::Kind::scalar) {
        auto v = integer(n, path, spec.min, spec.max);
        if (!v) return std::nullopt;
        out.push_back(*v);
        return ParamValue(out);
      }
      if (!is_list(n, path, "[0, 1]")) return std::nullopt;
      bool ok = true;
      for (size_t i = 0; i < n.items.size(); ++i) {
        auto v = integer(n.items[i], path + "[" + std::to_string(i) + "]", spec.min, spec.max);
        ok = ok && v.has_value();
        if (v) out.push_back(*v);
      }
      if (!ok) return std::nullopt;
      return ParamValue(out);
    }
    case ParamType::string_list: {
      std::vector<std::string> out;
      if (n.kind == Node::Kind::scalar) {
        if (!string_matches(spec, n, n.scalar, path)) return std::nullopt;
        return ParamValue(std::vector<std::string>{n.scalar});
      }
      if (!is_list(n, path)) return std::nullopt;
      bool ok = true;
      for (size_t i = 0; i < n.items.size(); ++i) {
        const std::string ipath = path + "[" + std::to_string(i) + "]";
        auto v = string(n.items[i], ipath);
        if (v && !string_matches(spec, n.items[i], *v, ipath)) v.reset();
        ok = ok && v.has_value();
        if (v) out.push_back(*v);
      }
      if (!ok) return std::nullopt;
      return ParamValue(out);
    }
  }
  return std::nullopt;
}

}  // namespace sy::pipeline
