#include "chat/value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "chat/numbers.hpp"

namespace sy::chat {

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

Value* Dict::find(std::string_view key) {
  for (auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(std::string key, Value v) {
  if (Value* e = find(key)) {
    *e = std::move(v);
    return;
  }
  items.emplace_back(std::move(key), std::move(v));
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined:
    case Value::Kind::none: return false;
    case Value::Kind::boolean: return v.b;
    case Value::Kind::integer: return v.i != 0;
    case Value::Kind::floating: return v.f != 0;
    case Value::Kind::string: return !v.s->empty();
    case Value::Kind::list: return !v.list->empty();
    case Value::Kind::dict: return !v.dict->items.empty();
    case Value::Kind::ns:
    case Value::Kind::callable: return true;
  }
  return false;
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  // Shortest round-trip digits, laid out as Python does: positional for exponents in
  // [-4, 16), scientific otherwise, always with a '.0' or an exponent.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  const int exp = std::stoi(sci.substr(e + 1));
  const bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      if (static_cast<int>(digits.size()) <= exp + 1) {
        out = digits + std::string(static_cast<size_t>(exp + 1) - digits.size(), '0') + ".0";
      } else {
        out = digits.substr(0, static_cast<size_t>(exp + 1)) + "." + digits.substr(static_cast<size_t>(exp + 1));
      }
    } else {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return neg ? "-" + out : out;
}

namespace {

std::string repr_string(const std::string& s) {
  const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == static_cast<unsigned char>(q)) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          char b[8];
          std::snprintf(b, sizeof b, "\\x%02x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += q;
  return out;
}

}  // namespace

namespace {

// Values deeper than kMaxNesting are refused when a render builds them; these guards keep
// the recursive printers and comparisons bounded even for a value that was never checked.
constexpr uint32_t kGuard = 2 * kMaxNesting + 2;

std::string repr_at(const Value& v, uint32_t level) {
  switch (v.kind) {
    case Value::Kind::string: return repr_string(*v.s);
    case Value::Kind::list: {
      if (level > kGuard) return "[...]";  // what Python's repr prints for a recursive list
      std::string out = "[";
      for (size_t i = 0; i < v.list->size(); ++i) out += (i ? ", " : "") + repr_at((*v.list)[i], level + 1);
      return out + "]";
    }
    case Value::Kind::dict: {
      if (level > kGuard) return "{...}";
      std::string out = "{";
      for (size_t i = 0; i < v.dict->items.size(); ++i)
        out += (i ? ", " : "") + repr_string(v.dict->items[i].first) + ": " + repr_at(v.dict->items[i].second, level + 1);
      return out + "}";
    }
    case Value::Kind::ns: return "<Namespace>";
    case Value::Kind::undefined: return "Undefined";
    default: return to_str(v);
  }
}

}  // namespace

std::string repr(const Value& v) { return repr_at(v, 0); }

std::string to_str(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined: return "";
    case Value::Kind::none: return "None";
    case Value::Kind::boolean: return v.b ? "True" : "False";
    case Value::Kind::integer: return std::to_string(v.i);
    case Value::Kind::floating: return float_repr(v.f);
    case Value::Kind::string: return *v.s;
    case Value::Kind::callable: return "<function>";
    default: return repr(v);
  }
}

std::partial_ordering compare_numbers(const Value& a, const Value& b) {
  const bool af = a.kind == Value::Kind::floating, bf = b.kind == Value::Kind::floating;
  if (af && bf) return a.f <=> b.f;
  if (af) return 0 <=> num::compare(int_of(b), a.f);  // reversed: compare(b, a)
  if (bf) return num::compare(int_of(a), b.f);
  return int_of(a) <=> int_of(b);
}

namespace {

bool equal_at(const Value& a, const Value& b, uint32_t level) {
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == 0;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::undefined:
    case Value::Kind::none: return true;
    case Value::Kind::string: return *a.s == *b.s;
    case Value::Kind::list:
      if (a.list == b.list) return true;
      if (a.list->size() != b.list->size() || level > kGuard) return false;
      for (size_t i = 0; i < a.list->size(); ++i)
        if (!equal_at((*a.list)[i], (*b.list)[i], level + 1)) return false;
      return true;
    case Value::Kind::dict:
      if (a.dict == b.dict) return true;
      if (a.dict->items.size() != b.dict->items.size() || level > kGuard) return false;
      for (const auto& [k, v] : a.dict->items) {
        const Value* o = b.dict->find(k);
        if (!o || !equal_at(v, *o, level + 1)) return false;
      }
      return true;
    // Jinja2's Namespace has no __eq__: two are equal only when they are the same object
    // (and a namespace that holds itself compares without recursing).
    case Value::Kind::ns: return a.dict == b.dict;
    default: return a.fn == b.fn;
  }
}

}  // namespace

bool equal(const Value& a, const Value& b) { return equal_at(a, b, 0); }

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined: return "Undefined";
    case Value::Kind::none: return "NoneType";
    case Value::Kind::boolean: return "bool";
    case Value::Kind::integer: return "int";
    case Value::Kind::floating: return "float";
    case Value::Kind::string: return "str";
    case Value::Kind::list: return "list";
    case Value::Kind::dict: return "dict";
    case Value::Kind::ns: return "Namespace";
    case Value::Kind::callable: return "function";
  }
  return "object";
}

namespace {

void json_string(const std::string& s, std::string& out, bool ensure_ascii) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else if (c >= 0x80 && ensure_ascii) {
          // Decode one code point and write it as \uXXXX (a surrogate pair above U+FFFF).
          uint32_t cp = 0;
          size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
          cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
          for (size_t k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
          i += n - 1;
          char b[16];
          if (cp >= 0x10000) {
            cp -= 0x10000;
            std::snprintf(b, sizeof b, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
          } else {
            std::snprintf(b, sizeof b, "\\u%04x", cp);
          }
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

bool json_value(const Value& v, std::string& out, const JsonOptions& o, int depth, std::string& err) {
  if (out.size() > o.max_size) {
    err = "tojson output past the output limit of " + std::to_string(o.max_size) + " bytes";
    return false;
  }
  if (depth > static_cast<int>(kGuard)) {
    err = "tojson: values nested more than " + std::to_string(kGuard) + " levels deep";
    return false;
  }
  auto newline = [&](int d) {
    if (!o.indent) return;
    out += '\n';
    for (int k = 0; k < d && out.size() <= o.max_size; ++k) out += *o.indent;
  };
  switch (v.kind) {
    case Value::Kind::none: out += "null"; return true;
    case Value::Kind::boolean: out += v.b ? "true" : "false"; return true;
    case Value::Kind::integer: out += std::to_string(v.i); return true;
    case Value::Kind::floating:
      out += std::isnan(v.f) ? "NaN" : std::isinf(v.f) ? (v.f < 0 ? "-Infinity" : "Infinity") : float_repr(v.f);
      return true;
    case Value::Kind::string: json_string(*v.s, out, o.ensure_ascii); return true;
    case Value::Kind::list: {
      if (v.list->empty()) {
        out += "[]";
        return true;
      }
      out += '[';
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += o.item_sep;
        newline(depth + 1);
        if (!json_value((*v.list)[i], out, o, depth + 1, err)) return false;
      }
      newline(depth);
      out += ']';
      return true;
    }
    case Value::Kind::dict: {  // json.dumps refuses a Namespace (it is not a dict)
      if (v.dict->items.empty()) {
        out += "{}";
        return true;
      }
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& kv : v.dict->items) items.push_back(&kv);
      if (o.sort_keys) std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += o.item_sep;
        newline(depth + 1);
        json_string(items[i]->first, out, o.ensure_ascii);
        out += o.key_sep;
        if (!json_value(items[i]->second, out, o, depth + 1, err)) return false;
      }
      newline(depth);
      out += '}';
      return true;
    }
    default:
      err = "Object of type " + type_name(v) + " is not JSON serializable";
      return false;
  }
}

}  // namespace

bool to_json(const Value& v, std::string& out, const JsonOptions& o, std::string& err) {
  if (!json_value(v, out, o, 0, err)) return false;
  if (out.size() > o.max_size) {
    err = "tojson output past the output limit of " + std::to_string(o.max_size) + " bytes";
    return false;
  }
  return true;
}

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&#34;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

namespace {

Value from_json_at(const nlohmann::ordered_json& j, uint32_t level) {
  if (level > kMaxNesting && (j.is_array() || j.is_object())) {
    // Too deep to hold: an empty stand-in one level past the limit, which makes the whole
    // context refused by the render (with the limit in the message) without recursing on.
    Value v = Value::make_list();
    v.depth = kMaxNesting + 1;
    return v;
  }
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      // Above 2**63 - 1 a JSON integer does not fit the interpreter's integers; the nearest
      // float keeps its magnitude instead of wrapping it to a negative number.
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Value::floating(static_cast<double>(u));
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::floating(j.get<double>());
    case nlohmann::json::value_t::string: return Value::str(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      List l;
      for (const auto& e : j) l.push_back(from_json_at(e, level + 1));
      return Value::make_list(std::move(l));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      for (const auto& [k, e] : j.items()) d.items.emplace_back(k, from_json_at(e, level + 1));
      return Value::make_dict(std::move(d));
    }
    default: return Value::none();
  }
}

}  // namespace

Value from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

}  // namespace sy::chat
