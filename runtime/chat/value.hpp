// Values of the template language with Python's semantics: what chat templates compute
// with is Python objects (str(), repr(), truthiness, int/float, ordered dicts), so that is
// what these reproduce.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sy::chat {

struct Value;
using List = std::vector<Value>;
/// Insertion-ordered string-keyed mapping (Python dict, JSON object).
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  [[nodiscard]] const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  void set(std::string key, Value v);
};
class Interp;
struct Args;

/// How many levels values may nest (a list in a list in ...). Printing, comparing,
/// serialising and freeing a value recurse once per level, so a render refuses to build a
/// deeper one and the printers stop there too. Measured under ASan + UBSan at -O0, freeing
/// costs about 1 KiB of stack a level (an 8 MiB stack overflows past ~8 500 levels), so 500
/// levels take about 0.5 MiB. Python's own printing gives up near 1 000 (RecursionError).
inline constexpr uint32_t kMaxNesting = 500;
using Native = std::function<Value(Interp&, Args&)>;

struct Value {
  enum class Kind { undefined, none, boolean, integer, floating, string, list, dict, ns, callable };
  Kind kind = Kind::undefined;
  /// Levels of containers in this value: 0 for a scalar, 1 + the deepest item for a list or
  /// dict. A namespace counts as 1: it is never printed, compared or serialised through, and
  /// the render empties it at the end. A method bound to a value is one level above it.
  uint32_t depth = 0;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::shared_ptr<const std::string> s;  // string
  bool safe = false;                      // Markup (from |safe)
  std::shared_ptr<List> list;             // list (immutable by the sandbox)
  std::shared_ptr<Dict> dict;             // dict or namespace (a namespace is writable)
  std::shared_ptr<Native> fn;             // callable
  std::string undefined_name;             // for messages

  static Value undef(std::string name = {}) {
    Value v;
    v.undefined_name = std::move(name);
    return v;
  }
  static Value none() { return with(Kind::none); }
  static Value boolean(bool x) {
    Value v = with(Kind::boolean);
    v.b = x;
    return v;
  }
  static Value integer(int64_t x) {
    Value v = with(Kind::integer);
    v.i = x;
    return v;
  }
  static Value floating(double x) {
    Value v = with(Kind::floating);
    v.f = x;
    return v;
  }
  static Value str(std::string x, bool is_safe = false) {
    Value v = with(Kind::string);
    v.s = std::make_shared<const std::string>(std::move(x));
    v.safe = is_safe;
    return v;
  }
  static Value make_list(List l = {}) {
    Value v = with(Kind::list);
    uint32_t d = 0;
    for (const Value& x : l) d = std::max(d, x.depth);
    v.depth = above(d);
    v.list = std::make_shared<List>(std::move(l));
    return v;
  }
  static Value make_dict(Dict d = {}, Kind k = Kind::dict) {
    Value v = with(k);
    uint32_t deepest = 0;
    if (k != Kind::ns)
      for (const auto& kv : d.items) deepest = std::max(deepest, kv.second.depth);
    v.depth = above(deepest);
    v.dict = std::make_shared<Dict>(std::move(d));
    return v;
  }
  /// `bound` is the value the function keeps alive (a method's object), if any.
  static Value callable(Native f, const Value* bound = nullptr) {
    Value v = with(Kind::callable);
    v.fn = std::make_shared<Native>(std::move(f));
    if (bound) v.depth = above(bound->depth);
    return v;
  }

  [[nodiscard]] bool is(Kind k) const { return kind == k; }
  [[nodiscard]] bool is_undefined() const { return kind == Kind::undefined; }
  [[nodiscard]] bool is_number() const { return kind == Kind::integer || kind == Kind::floating || kind == Kind::boolean; }
  [[nodiscard]] bool is_mapping() const { return kind == Kind::dict || kind == Kind::ns; }
  [[nodiscard]] const std::string& text() const { return *s; }
  [[nodiscard]] double number() const { return kind == Kind::floating ? f : kind == Kind::boolean ? (b ? 1 : 0) : static_cast<double>(i); }

 private:
  // Saturates, so that no chain of containers can wrap the count.
  static uint32_t above(uint32_t d) { return d < UINT32_MAX ? d + 1 : d; }
  static Value with(Kind k) {
    Value v;
    v.kind = k;
    return v;
  }
};

/// Python's truthiness (undefined is false).
bool truthy(const Value& v);
/// Python's str() (undefined prints as "").
std::string to_str(const Value& v);
/// Python's repr().
std::string repr(const Value& v);
/// Python's repr of a float ("450.0", "22.5", "1e+20").
std::string float_repr(double d);
/// Python's == between values.
bool equal(const Value& a, const Value& b);
/// Python's ordering of two numbers (bool, int, float), exact between integers and floats;
/// unordered when a NaN is involved.
std::partial_ordering compare_numbers(const Value& a, const Value& b);
/// The integer value of an int or bool.
inline int64_t int_of(const Value& v) { return v.kind == Value::Kind::boolean ? int64_t{v.b} : v.i; }
/// The type name Python would print ("str", "list", "NoneType", ...).
std::string type_name(const Value& v);

/// json.dumps's options. `indent` unset is the one-line form; set, each level is indented
/// by that string (Python's indent=n is n spaces).
struct JsonOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;
  std::string item_sep = ", ", key_sep = ": ";  // Python: "," when indenting
  bool sort_keys = false;
  size_t max_size = SIZE_MAX;  // stops with an error past this many bytes
};
/// json.dumps(v, ...). Returns false (and sets `err`) for values JSON cannot hold or output
/// past `max_size`.
bool to_json(const Value& v, std::string& out, const JsonOptions& o, std::string& err);

/// markupsafe.escape on text: & < > " ' as HTML entities.
std::string html_escape(const std::string& s);

/// A JSON document as template values (objects keep their order; 2 stays an integer and
/// 2.0 a float).
Value from_json(const nlohmann::ordered_json& j);

}  // namespace sy::chat
