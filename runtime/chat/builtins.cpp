// Built-ins: globals (range, dict, namespace, raise_exception, strftime_now), attribute
// and method lookup with the immutable sandbox, filters and tests.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include "chat/interp.hpp"

namespace sy::chat {
namespace {

using K = RenderFailure::Kind;

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string strip(const std::string& s, const Value& chars, bool left, bool right) {
  auto strip_it = [&](char c) {
    return chars.kind == Value::Kind::string ? chars.text().find(c) != std::string::npos : is_space(c);
  };
  size_t b = 0, e = s.size();
  if (left)
    while (b < e && strip_it(s[b])) ++b;
  if (right)
    while (e > b && strip_it(s[e - 1])) --e;
  return s.substr(b, e - b);
}

Value split(const std::string& s, const Value& sep, int64_t maxsplit) {
  List out;
  if (sep.kind != Value::Kind::string) {  // whitespace runs, empty pieces dropped
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        size_t e = s.size();
        while (e > i && is_space(s[e - 1])) --e;
        out.push_back(Value::str(s.substr(i, e - i)));
        break;
      }
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      out.push_back(Value::str(s.substr(i, j - i)));
      i = j;
    }
    return Value::make_list(std::move(out));
  }
  const std::string& d = sep.text();
  size_t i = 0;
  for (size_t at; !d.empty() && (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) &&
                  (at = s.find(d, i)) != std::string::npos;
       i = at + d.size())
    out.push_back(Value::str(s.substr(i, at - i)));
  out.push_back(Value::str(s.substr(i)));
  return Value::make_list(std::move(out));
}

std::string replace_all(std::string s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) return s;
  std::string out;
  size_t i = 0;
  int64_t done = 0;
  for (size_t at; (count < 0 || done < count) && (at = s.find(from, i)) != std::string::npos; i = at + from.size(), ++done)
    out += s.substr(i, at - i) + to;
  return out + s.substr(i);
}

Value items_of(const Value& d) {
  List l;
  for (const auto& [k, v] : d.dict->items) l.push_back(Value::make_list({Value::str(k), v}));
  return Value::make_list(std::move(l));
}

bool starts_or_ends(const std::string& s, const Value& what, bool start) {
  auto one = [&](const std::string& p) {
    return p.size() <= s.size() && (start ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0);
  };
  if (what.kind == Value::Kind::list) {
    for (const auto& p : *what.list)
      if (p.kind == Value::Kind::string && one(p.text())) return true;
    return false;
  }
  return what.kind == Value::Kind::string && one(what.text());
}

// Methods that mutate, refused by the immutable sandbox.
bool mutating(const std::string& m) {
  static const std::set<std::string> names{"append", "extend", "insert", "remove", "sort", "reverse", "update",
                                           "setdefault", "popitem", "pop", "clear", "add", "discard"};
  return names.count(m) > 0;
}

}  // namespace

Interp::Interp(const RenderOptions& o) : opts_(o) {
  globals_.set("range", Value::callable([](Interp& in, Args& a) {
                 int64_t start = 0, stop = 0, stepv = 1;
                 auto num = [&](size_t k) {
                   if (a.pos[k].kind != Value::Kind::integer) in.fail(K::type, "range() needs integers");
                   return a.pos[k].i;
                 };
                 if (a.pos.size() == 1) stop = num(0);
                 else if (a.pos.size() >= 2) start = num(0), stop = num(1);
                 if (a.pos.size() >= 3) stepv = num(2);
                 if (stepv == 0) in.fail(K::type, "range() arg 3 must not be zero");
                 if ((stop - start) / stepv > 100000) in.fail(K::limit, "range() larger than 100000 items");
                 List l;
                 for (int64_t i = start; stepv > 0 ? i < stop : i > stop; i += stepv) {
                   in.count_step();
                   l.push_back(Value::integer(i));
                 }
                 return Value::make_list(std::move(l));
               }));
  auto dict_fn = [](Value::Kind kind) {
    return [kind](Interp&, Args& a) {
      Dict d;
      if (!a.pos.empty() && a.pos[0].is_mapping()) d = *a.pos[0].dict;
      for (const auto& [k, v] : a.kw) d.set(k, v);
      return Value::make_dict(std::move(d), kind);
    };
  };
  globals_.set("dict", Value::callable(dict_fn(Value::Kind::dict)));
  globals_.set("namespace", Value::callable(dict_fn(Value::Kind::ns)));
  globals_.set("raise_exception", Value::callable([](Interp& in, Args& a) -> Value {
                 in.fail(K::raise_exception, a.pos.empty() ? std::string() : to_str(a.pos[0]));
               }));
  globals_.set("strftime_now", Value::callable([](Interp& in, Args& a) {
                 std::tm tm{};
                 if (in.opts_.now) {
                   tm = *in.opts_.now;
                 } else {
                   const std::time_t t = std::time(nullptr);
                   localtime_r(&t, &tm);
                 }
                 char buf[256];
                 const std::string fmt = a.pos.empty() ? std::string() : to_str(a.pos[0]);
                 const size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
                 return Value::str(std::string(buf, n));
               }));
}

Value Interp::attribute(const Value& obj, const std::string& name, bool attr_first) {
  if (obj.is_undefined())
    fail(K::undefined, "'" + (obj.undefined_name.empty() ? "value" : obj.undefined_name) + "' is undefined (no attribute '" +
                           name + "')");
  auto method = [&](auto fn) {
    Value self = obj;
    return Value::callable([self, fn](Interp& in, Args& a) { return fn(in, self, a); });
  };
  if (mutating(name) && (obj.kind == Value::Kind::list || obj.kind == Value::Kind::dict)) {
    const std::string tn = type_name(obj);
    return Value::callable([name, tn](Interp& in, Args&) -> Value {
      in.fail(K::sandbox, "access to attribute '" + name + "' of '" + tn + "' object is unsafe.");
    });
  }
  if (obj.kind == Value::Kind::dict || obj.kind == Value::Kind::ns) {
    const bool dict_method = obj.kind == Value::Kind::dict && (name == "items" || name == "get" || name == "keys" || name == "values");
    if (dict_method && (attr_first || !obj.dict->find(name))) {
      if (name == "items") return method([](Interp&, const Value& d, Args&) { return items_of(d); });
      if (name == "keys")
        return method([](Interp&, const Value& d, Args&) {
          List l;
          for (const auto& kv : d.dict->items) l.push_back(Value::str(kv.first));
          return Value::make_list(std::move(l));
        });
      if (name == "values")
        return method([](Interp&, const Value& d, Args&) {
          List l;
          for (const auto& kv : d.dict->items) l.push_back(kv.second);
          return Value::make_list(std::move(l));
        });
      return method([](Interp&, const Value& d, Args& a) {
        const Value key = a.get(0, "key");
        const Value* v = key.kind == Value::Kind::string ? d.dict->find(key.text()) : nullptr;
        return v ? *v : a.get(1, "default", Value::none());
      });
    }
    if (const Value* v = obj.dict->find(name)) return *v;
    return Value::undef(name);
  }
  if (obj.kind == Value::Kind::string) {
    const std::string& s = obj.text();
    (void)s;
    if (name == "split" || name == "rsplit")
      return method([](Interp&, const Value& v, Args& a) {
        const Value mx = a.get(1, "maxsplit", Value::integer(-1));
        return split(v.text(), a.get(0, "sep", Value::none()), mx.kind == Value::Kind::integer ? mx.i : -1);
      });
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      const bool l = name != "rstrip", r = name != "lstrip";
      return method([l, r](Interp&, const Value& v, Args& a) { return Value::str(strip(v.text(), a.get(0, "chars", Value::none()), l, r)); });
    }
    if (name == "startswith" || name == "endswith") {
      const bool st = name == "startswith";
      return method([st](Interp&, const Value& v, Args& a) { return Value::boolean(starts_or_ends(v.text(), a.get(0, "prefix"), st)); });
    }
    if (name == "replace")
      return method([](Interp&, const Value& v, Args& a) {
        const Value c = a.get(2, "count", Value::integer(-1));
        return Value::str(replace_all(v.text(), to_str(a.get(0, "old")), to_str(a.get(1, "new")), c.kind == Value::Kind::integer ? c.i : -1));
      });
    if (name == "upper" || name == "lower")
      return method([up = name == "upper"](Interp&, const Value& v, Args&) {
        std::string r = v.text();
        for (auto& c : r) c = static_cast<char>(up ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
        return Value::str(r);
      });
    if (name == "title" || name == "capitalize")
      return method([title = name == "title"](Interp&, const Value& v, Args&) {
        std::string r = v.text();
        bool start = true;
        for (auto& c : r) {
          const auto u = static_cast<unsigned char>(c);
          c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
          start = title ? !std::isalpha(u) : false;
        }
        return Value::str(r);
      });
    if (name == "find" || name == "count")
      return method([find = name == "find"](Interp&, const Value& v, Args& a) {
        const std::string sub = to_str(a.get(0, "sub"));
        if (find) {
          const size_t at = v.text().find(sub);
          return Value::integer(at == std::string::npos ? -1 : static_cast<int64_t>(code_points(v.text().substr(0, at))));
        }
        int64_t n = 0;
        for (size_t at = 0; !sub.empty() && (at = v.text().find(sub, at)) != std::string::npos; at += sub.size()) ++n;
        return Value::integer(n);
      });
    if (name == "join")
      return method([](Interp& in, const Value& v, Args& a) {
        std::string r;
        const List items = in.iterate(a.get(0, "iterable"));
        for (size_t k = 0; k < items.size(); ++k) r += (k ? v.text() : "") + to_str(items[k]);
        return Value::str(r);
      });
    return Value::undef(name);
  }
  if (obj.kind == Value::Kind::list && (name == "index" || name == "count")) {
    return method([idx = name == "index"](Interp& in, const Value& v, Args& a) {
      const Value x = a.get(0, "value");
      int64_t n = 0;
      for (size_t k = 0; k < v.list->size(); ++k)
        if (equal((*v.list)[k], x)) {
          if (idx) return Value::integer(static_cast<int64_t>(k));
          ++n;
        }
      if (idx) in.fail(K::type, "value is not in list");
      return Value::integer(n);
    });
  }
  return Value::undef(name);
}

bool Interp::run_test(const std::string& name, const Value& v, const Args& a) {
  const Value arg = a.get(0, "value");
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.kind == Value::Kind::none;
  if (name == "string") return v.kind == Value::Kind::string;
  if (name == "mapping") return v.is_mapping();
  // Jinja's Undefined iterates as empty and has a length, so it passes both.
  if (name == "iterable" || name == "sequence")
    return v.is_undefined() || v.kind == Value::Kind::string || v.kind == Value::Kind::list || v.is_mapping();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.kind == Value::Kind::integer;
  if (name == "float") return v.kind == Value::Kind::floating;
  if (name == "boolean") return v.kind == Value::Kind::boolean;
  if (name == "true") return v.kind == Value::Kind::boolean && v.b;
  if (name == "false") return v.kind == Value::Kind::boolean && !v.b;
  if (name == "callable") return v.kind == Value::Kind::callable;
  if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return equal(v, arg);
  if (name == "ne" || name == "!=") return !equal(v, arg);
  if (name == "gt" || name == "greaterthan" || name == "lt" || name == "lessthan" || name == "ge" || name == "le") {
    if (!v.is_number() || !arg.is_number()) fail(K::type, "'" + name + "' test needs numbers");
    const double x = v.number(), y = arg.number();
    return name == "gt" || name == "greaterthan" ? x > y : name == "lt" || name == "lessthan" ? x < y : name == "ge" ? x >= y : x <= y;
  }
  if (name == "divisibleby") {
    if (v.kind != Value::Kind::integer || arg.kind != Value::Kind::integer || arg.i == 0) fail(K::type, "divisibleby needs integers");
    return v.i % arg.i == 0;
  }
  if (name == "odd" || name == "even") {
    if (v.kind != Value::Kind::integer) fail(K::type, "'" + name + "' test needs an integer");
    return (v.i % 2 != 0) == (name == "odd");
  }
  if (name == "in") {
    Args none;
    return truthy(Value::boolean([&] {
      if (arg.kind == Value::Kind::string) return v.kind == Value::Kind::string && arg.text().find(v.text()) != std::string::npos;
      if (arg.kind == Value::Kind::list)
        return std::any_of(arg.list->begin(), arg.list->end(), [&](const Value& x) { return equal(x, v); });
      return arg.is_mapping() && v.kind == Value::Kind::string && arg.dict->find(v.text());
    }()));
  }
  if (name == "lower" || name == "upper") {
    if (v.kind != Value::Kind::string) return false;
    const std::string& s = v.text();
    return std::none_of(s.begin(), s.end(), [&](char c) {
      return name == "lower" ? std::isupper(static_cast<unsigned char>(c)) : std::islower(static_cast<unsigned char>(c));
    });
  }
  fail(K::type, "no test named '" + name + "'");
}

Value Interp::apply_filter(const Expr& f, Value input) {
  Args a = eval_args(f, 1);
  return call_filter(f.name, input, a);
}

Value Interp::call_filter(const std::string& name, const Value& v, Args& a) {
  auto need_string = [&](const Value& x) -> std::string {
    if (x.is_undefined()) return "";
    return to_str(x);
  };
  if (name == "tojson") {
    const Value ind = a.get(0, "indent", Value::none());
    std::string out, err;
    if (!to_json(v, out, truthy(a.get(99, "ensure_ascii", Value::boolean(false))),
                 ind.kind == Value::Kind::integer ? static_cast<int>(ind.i) : -1, truthy(a.get(99, "sort_keys", Value::boolean(false))), err))
      fail(K::type, err);
    return Value::str(std::move(out));
  }
  if (name == "length" || name == "count") {
    if (v.kind == Value::Kind::string) return Value::integer(static_cast<int64_t>(code_points(v.text())));
    if (v.kind == Value::Kind::list) return Value::integer(static_cast<int64_t>(v.list->size()));
    if (v.is_mapping()) return Value::integer(static_cast<int64_t>(v.dict->items.size()));
    if (v.is_undefined()) return Value::integer(0);
    fail(K::type, "object of type '" + type_name(v) + "' has no len()");
  }
  if (name == "string") return v.kind == Value::Kind::string ? v : Value::str(to_str(v));
  if (name == "trim") return Value::str(strip(need_string(v), a.get(0, "chars", Value::none()), true, true));
  if (name == "safe") return Value::str(to_str(v), true);
  if (name == "escape" || name == "e") return v.safe ? v : Value::str(to_str(v), true);
  if (name == "items") {
    if (v.is_undefined()) return Value::make_list();
    if (!v.is_mapping()) fail(K::type, "|items expects a mapping, got " + type_name(v));
    return items_of(v);
  }
  if (name == "list") return Value::make_list(iterate(v));
  if (name == "join") {
    const Value attr = a.get(1, "attribute");
    std::string r;
    const List items = iterate(v);
    const std::string sep = to_str(a.get(0, "d", Value::str("")));
    for (size_t k = 0; k < items.size(); ++k)
      r += (k ? sep : "") + to_str(attr.is_undefined() ? items[k] : attribute(items[k], to_str(attr), false));
    return Value::str(std::move(r));
  }
  if (name == "default" || name == "d") {
    const bool boolean = truthy(a.get(1, "boolean", Value::boolean(false)));
    if (v.is_undefined() || (boolean && !truthy(v))) return a.get(0, "default_value", Value::str(""));
    return v;
  }
  if (name == "first" || name == "last") {
    const List items = iterate(v);
    if (items.empty()) return Value::undef();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    Args none;
    return invoke(attribute(Value::str(need_string(v)), name, true), none, name);
  }
  if (name == "replace") {
    const Value c = a.get(2, "count", Value::integer(-1));
    return Value::str(replace_all(need_string(v), to_str(a.get(0, "old")), to_str(a.get(1, "new")), c.kind == Value::Kind::integer ? c.i : -1));
  }
  if (name == "int") {
    if (v.kind == Value::Kind::floating) return Value::integer(static_cast<int64_t>(v.f));
    if (v.kind == Value::Kind::integer) return v;
    if (v.kind == Value::Kind::boolean) return Value::integer(v.b);
    try {
      return Value::integer(std::stoll(to_str(v)));
    } catch (...) {
      return a.get(0, "default", Value::integer(0));
    }
  }
  if (name == "float") {
    if (v.is_number()) return Value::floating(v.number());
    try {
      return Value::floating(std::stod(to_str(v)));
    } catch (...) {
      return a.get(0, "default", Value::floating(0));
    }
  }
  if (name == "abs") {
    if (v.kind == Value::Kind::integer) return Value::integer(v.i < 0 ? -v.i : v.i);
    if (v.kind == Value::Kind::floating) return Value::floating(std::fabs(v.f));
    fail(K::type, "bad operand type for abs(): '" + type_name(v) + "'");
  }
  if (name == "round") {
    const Value p = a.get(0, "precision", Value::integer(0));
    const std::string method = to_str(a.get(1, "method", Value::str("common")));
    const double scale = std::pow(10.0, static_cast<double>(p.kind == Value::Kind::integer ? p.i : 0));
    const double x = v.number() * scale;
    const double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::round(x);
    return Value::floating(r / scale);
  }
  if (name == "indent") {
    const Value w = a.get(0, "width", Value::integer(4));
    const std::string pad = w.kind == Value::Kind::string ? w.text() : std::string(static_cast<size_t>(std::max<int64_t>(0, w.i)), ' ');
    const bool first = truthy(a.get(1, "first", Value::boolean(false))), blank = truthy(a.get(2, "blank", Value::boolean(false)));
    const std::string s = need_string(v);
    std::string r;
    size_t i = 0;
    bool line_one = true;
    while (i <= s.size()) {
      const size_t nl = s.find('\n', i);
      const std::string line = s.substr(i, nl == std::string::npos ? std::string::npos : nl - i);
      if ((!line_one || first) && (blank || !line.empty())) r += pad;
      r += line;
      if (nl == std::string::npos) break;
      r += '\n';
      i = nl + 1;
      line_one = false;
    }
    return Value::str(r);
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    const bool attr = name.size() > 6 && name.compare(name.size() - 4, 4, "attr") == 0;
    const bool keep_if = name[0] == 's';
    const size_t t0 = attr ? 1 : 0;
    const std::string attr_name = attr ? to_str(a.get(0, "attribute")) : std::string();
    const std::string test = a.pos.size() > t0 ? to_str(a.pos[t0]) : std::string();
    Args targs;
    for (size_t k = t0 + 1; k < a.pos.size(); ++k) targs.pos.push_back(a.pos[k]);
    List out;
    for (const auto& item : iterate(v)) {
      const Value x = attr ? attribute(item, attr_name, false) : item;
      const bool r = test.empty() ? truthy(x) : run_test(test, x, targs);
      if (r == keep_if) out.push_back(item);
    }
    return Value::make_list(std::move(out));
  }
  if (name == "map") {
    const Value attr = a.get(99, "attribute");
    List out;
    for (const auto& item : iterate(v)) {
      if (!attr.is_undefined()) {
        Value x = attribute(item, to_str(attr), false);
        if (x.is_undefined()) x = a.get(99, "default", x);
        out.push_back(x);
      } else {
        Args fa;
        for (size_t k = 1; k < a.pos.size(); ++k) fa.pos.push_back(a.pos[k]);
        out.push_back(call_filter(a.pos.empty() ? std::string() : to_str(a.pos[0]), item, fa));
      }
    }
    return Value::make_list(std::move(out));
  }
  if (name == "unique") {
    List out;
    for (const auto& item : iterate(v))
      if (std::none_of(out.begin(), out.end(), [&](const Value& x) { return equal(x, item); })) out.push_back(item);
    return Value::make_list(std::move(out));
  }
  if (name == "reverse") {
    if (v.kind == Value::Kind::string) {
      List c = iterate(v);
      std::string r;
      for (auto it = c.rbegin(); it != c.rend(); ++it) r += it->text();
      return Value::str(r);
    }
    List l = iterate(v);
    std::reverse(l.begin(), l.end());
    return Value::make_list(std::move(l));
  }
  if (name == "sort" || name == "dictsort") {
    const bool dict = name == "dictsort";
    List l = dict ? (v.is_mapping() ? *items_of(v).list : List{}) : iterate(v);
    const bool rev = truthy(a.get(dict ? 2 : 0, "reverse", Value::boolean(false)));
    const Value attr = a.get(dict ? 99 : 2, "attribute");
    auto key = [&](const Value& x) { return dict ? (*x.list)[0] : attr.is_undefined() ? x : attribute(x, to_str(attr), false); };
    std::stable_sort(l.begin(), l.end(), [&](const Value& x, const Value& y) {
      const Value kx = key(x), ky = key(y);
      const bool lt = kx.is_number() && ky.is_number() ? kx.number() < ky.number() : to_str(kx) < to_str(ky);
      const bool gt = kx.is_number() && ky.is_number() ? kx.number() > ky.number() : to_str(kx) > to_str(ky);
      return rev ? gt : lt;
    });
    return Value::make_list(std::move(l));
  }
  if (name == "batch") {
    const Value n = a.get(0, "linecount");
    if (n.kind != Value::Kind::integer || n.i < 1) fail(K::type, "batch needs a positive size");
    List out, cur;
    for (const auto& item : iterate(v)) {
      cur.push_back(item);
      if (static_cast<int64_t>(cur.size()) == n.i) out.push_back(Value::make_list(std::exchange(cur, {})));
    }
    if (!cur.empty()) out.push_back(Value::make_list(std::move(cur)));
    return Value::make_list(std::move(out));
  }
  if (name == "wordcount") return Value::integer(static_cast<int64_t>(split(need_string(v), Value::none(), -1).list->size()));
  if (name == "sum" || name == "min" || name == "max") {
    const List l = iterate(v);
    if (name == "sum") {
      Value acc = a.get(1, "start", Value::integer(0));
      for (const auto& x : l) acc = binary("+", acc, x);
      return acc;
    }
    if (l.empty()) return Value::undef();
    Value best = l[0];
    for (const auto& x : l)
      if (truthy(binary(name == "min" ? "<" : ">", x, best))) best = x;
    return best;
  }
  if (name == "attr") return attribute(v, to_str(a.get(0, "name")), true);
  if (name == "center") {
    const std::string s = need_string(v);
    const Value w = a.get(0, "width", Value::integer(80));
    const auto width = static_cast<size_t>(std::max<int64_t>(0, w.i));
    const size_t n = code_points(s);
    if (n >= width) return Value::str(s);
    const size_t left = (width - n) / 2;
    return Value::str(std::string(left, ' ') + s + std::string(width - n - left, ' '));
  }
  fail(K::type, "no filter named '" + name + "'");
}

}  // namespace sy::chat
