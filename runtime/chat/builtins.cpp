// Built-ins: globals (range, dict, namespace, raise_exception, strftime_now), attribute
// and method lookup with the immutable sandbox, filters and tests.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include "chat/interp.hpp"
#include "chat/numbers.hpp"
#include "chat/strings.hpp"

namespace sy::chat {
namespace {

using K = RenderFailure::Kind;

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

Interp::~Interp() {
  // Our own references keep every namespace alive while the others are emptied.
  for (const auto& ns : namespaces_) ns->items.clear();
  for (const auto& scope : captured_scopes_) scope->items.clear();
}

Interp::Interp(const RenderOptions& o) : opts_(o) {
  globals_.set("range", Value::callable([](Interp& in, Args& a) {
                 auto num = [&](size_t k) {
                   const Value& v = a.pos[k];
                   if (v.kind != Value::Kind::integer && v.kind != Value::Kind::boolean)
                     in.fail(K::type, "'" + type_name(v) + "' object cannot be interpreted as an integer");
                   return int_of(v);
                 };
                 if (a.pos.empty() || a.pos.size() > 3) in.fail(K::type, "range expected 1 to 3 integer arguments");
                 int64_t start = 0, stop = 0, stepv = 1;
                 if (a.pos.size() == 1) stop = num(0);
                 else start = num(0), stop = num(1);
                 if (a.pos.size() == 3) stepv = num(2);
                 if (stepv == 0) in.fail(K::type, "range() arg 3 must not be zero");
                 const uint64_t len = num::range_length(start, stop, stepv);
                 if (len > 100000) in.fail(K::limit, "range() larger than 100000 items (the sandbox's MAX_RANGE)");
                 List l;
                 for (uint64_t k = 0; k < len; ++k) {
                   in.count_step();
                   l.push_back(Value::integer(num::range_item(start, stepv, k)));
                 }
                 return Value::make_list(std::move(l));
               }));
  auto dict_fn = [](Value::Kind kind) {
    return [kind](Interp& in, Args& a) {
      Dict d;
      if (!a.pos.empty() && a.pos[0].is_mapping()) d = *a.pos[0].dict;
      for (const auto& [k, v] : a.kw) d.set(k, v);
      Value made = Value::make_dict(std::move(d), kind);
      if (kind == Value::Kind::ns) in.namespaces_.push_back(made.dict);
      return made;
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
    return Value::callable([self, fn](Interp& in, Args& a) { return fn(in, self, a); }, &self);
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
      return method([l, r](Interp&, const Value& v, Args& a) {
        const Value chars = a.get(0, "chars", Value::none());
        return Value::str(strip(v.text(), chars.kind == Value::Kind::string ? &chars.text() : nullptr, l, r));
      });
    }
    if (name == "startswith" || name == "endswith") {
      const bool st = name == "startswith";
      return method([st](Interp&, const Value& v, Args& a) { return Value::boolean(starts_or_ends(v.text(), a.get(0, "prefix"), st)); });
    }
    if (name == "replace")
      return method([](Interp& in, const Value& v, Args& a) {
        const Value c = a.get(2, "count", Value::integer(-1));
        const std::string from = to_str(a.get(0, "old")), to = to_str(a.get(1, "new"));
        if (from.empty()) in.check_size(v.text().size() + to.size() * (code_points(v.text()) + 1), "replace");
        return Value::str(replace(v.text(), from, to, c.kind == Value::Kind::integer ? c.i : -1));
      });
    if (name == "upper" || name == "lower")
      return method([up = name == "upper"](Interp&, const Value& v, Args&) {
        return Value::str(up ? ascii_upper(v.text()) : ascii_lower(v.text()));
      });
    if (name == "title" || name == "capitalize")
      return method([title = name == "title"](Interp&, const Value& v, Args&) {
        return Value::str(title ? str_title(v.text()) : capitalize(v.text()));
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

Value Interp::apply_filter(const Expr& f, Value input) {
  Args a = eval_args(f, 1);
  return call_filter(f.name, input, a);
}

}  // namespace sy::chat
