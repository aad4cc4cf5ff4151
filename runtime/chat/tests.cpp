// The tests (`x is name`), each as Jinja2 3.1's tests.py defines it. Undefined passes
// `iterable`, `sequence` and `callable` (it iterates as empty, has a length and a __call__
// that raises); arithmetic tests on it raise, as its operators do.
#include <map>

#include "chat/interp.hpp"
#include "chat/strings.hpp"

namespace sy::chat {
namespace {

using K = RenderFailure::Kind;
using Test = bool (*)(Interp&, const Value&, const Args&);

// value % num == r with Python's %: strings format instead ("" % 2 raises), undefined raises.
bool mod_equals(Interp& in, const Value& v, const Value& num, int64_t r) {
  if (v.kind == Value::Kind::string) in.fail(K::type, "not all arguments converted during string formatting");
  return equal(in.binary("%", v, num), Value::integer(r));
}

bool compare_test(Interp& in, const char* op, const Value& v, const Args& a) { return in.ordered(op, v, a.get(0, "other")); }

bool sameas(Interp&, const Value& v, const Args& a) {
  // `is`: lists, dicts and callables are the same only when they are one object.
  const Value o = a.get(0, "other");
  if (v.kind != o.kind) return false;
  if (v.kind == Value::Kind::list) return v.list == o.list;
  if (v.is_mapping()) return v.dict == o.dict;
  if (v.kind == Value::Kind::callable) return v.fn == o.fn;
  return equal(v, o);
}

bool registered(Interp& in, const Value& v, const std::vector<std::string>& names) {
  if (v.kind == Value::Kind::list || v.kind == Value::Kind::dict) in.fail(K::type, "unhashable type: '" + type_name(v) + "'");
  if (v.kind != Value::Kind::string) return false;
  for (const auto& n : names)
    if (n == v.text()) return true;
  return false;
}

const std::map<std::string, Test>& table() {
  static const std::map<std::string, Test> t{
      {"odd", [](Interp& in, const Value& v, const Args&) { return mod_equals(in, v, Value::integer(2), 1); }},
      {"even", [](Interp& in, const Value& v, const Args&) { return mod_equals(in, v, Value::integer(2), 0); }},
      {"divisibleby", [](Interp& in, const Value& v, const Args& a) { return mod_equals(in, v, a.get(0, "num"), 0); }},
      {"defined", [](Interp&, const Value& v, const Args&) { return !v.is_undefined(); }},
      {"undefined", [](Interp&, const Value& v, const Args&) { return v.is_undefined(); }},
      {"filter", [](Interp& in, const Value& v, const Args&) { return registered(in, v, filter_names()); }},
      {"test", [](Interp& in, const Value& v, const Args&) { return registered(in, v, test_names()); }},
      {"none", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::none; }},
      {"boolean", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::boolean; }},
      {"false", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::boolean && !v.b; }},
      {"true", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::boolean && v.b; }},
      {"integer", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::integer; }},
      {"float", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::floating; }},
      {"lower", [](Interp&, const Value& v, const Args&) { return is_lower(to_str(v)); }},
      {"upper", [](Interp&, const Value& v, const Args&) { return is_upper(to_str(v)); }},
      {"string", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::string; }},
      {"mapping", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::dict; }},
      {"number", [](Interp&, const Value& v, const Args&) { return v.is_number(); }},
      {"sequence",
       [](Interp&, const Value& v, const Args&) {
         return v.is_undefined() || v.kind == Value::Kind::string || v.kind == Value::Kind::list || v.kind == Value::Kind::dict;
       }},
      {"iterable",
       [](Interp&, const Value& v, const Args&) {
         return v.is_undefined() || v.kind == Value::Kind::string || v.kind == Value::Kind::list || v.kind == Value::Kind::dict;
       }},
      {"callable", [](Interp&, const Value& v, const Args&) { return v.is_undefined() || v.kind == Value::Kind::callable; }},
      {"sameas", sameas},
      {"escaped", [](Interp&, const Value& v, const Args&) { return v.kind == Value::Kind::string && v.safe; }},
      {"in", [](Interp& in, const Value& v, const Args& a) { return truthy(in.binary("in", v, a.get(0, "seq"))); }},
      {"==", [](Interp&, const Value& v, const Args& a) { return equal(v, a.get(0, "other")); }},
      {"eq", [](Interp&, const Value& v, const Args& a) { return equal(v, a.get(0, "other")); }},
      {"equalto", [](Interp&, const Value& v, const Args& a) { return equal(v, a.get(0, "other")); }},
      {"!=", [](Interp&, const Value& v, const Args& a) { return !equal(v, a.get(0, "other")); }},
      {"ne", [](Interp&, const Value& v, const Args& a) { return !equal(v, a.get(0, "other")); }},
      {">", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, ">", v, a); }},
      {"gt", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, ">", v, a); }},
      {"greaterthan", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, ">", v, a); }},
      {">=", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, ">=", v, a); }},
      {"ge", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, ">=", v, a); }},
      {"<", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, "<", v, a); }},
      {"lt", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, "<", v, a); }},
      {"lessthan", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, "<", v, a); }},
      {"<=", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, "<=", v, a); }},
      {"le", [](Interp& in, const Value& v, const Args& a) { return compare_test(in, "<=", v, a); }},
  };
  return t;
}

}  // namespace

bool Interp::run_test(const std::string& name, const Value& v, const Args& a) {
  const auto& t = table();
  const auto it = t.find(name);
  if (it == t.end()) fail(K::type, "no test named '" + name + "'");
  return it->second(*this, v, a);
}

std::vector<std::string> test_names() {
  std::vector<std::string> names;
  for (const auto& [k, f] : table()) names.push_back(k);
  return names;
}

}  // namespace sy::chat
