// The filters, each as Jinja2 3.1's filters.py defines it, in the environment transformers
// renders with (no autoescape, default Undefined). What a filter does with none, undefined,
// "", [] and {} follows from its Python source: most convert with str() or iterate with
// list(); select/reject/map test the input's truth first and yield nothing for a falsy one.
#include <cmath>
#include <map>

#include "chat/interp.hpp"
#include "chat/numbers.hpp"
#include "chat/strings.hpp"

namespace sy::chat {
namespace {

using K = RenderFailure::Kind;
using Filter = Value (*)(Interp&, const Value&, Args&);

[[noreturn]] void undefined_error(Interp& in, const Value& v) {
  in.fail(K::undefined, "'" + (v.undefined_name.empty() ? "value" : v.undefined_name) + "' is undefined");
}

// An argument Python uses as an integer (bool counts, float does not).
int64_t int_arg(Interp& in, const Value& v) {
  if (v.kind == Value::Kind::integer || v.kind == Value::Kind::boolean) return int_of(v);
  if (v.is_undefined()) undefined_error(in, v);
  in.fail(K::type, "'" + type_name(v) + "' object cannot be interpreted as an integer");
}

// Jinja's getitem-first lookup of `attribute` (dots descend, digits index lists).
Value item_path(Interp& in, const Value& item, const std::string& path) {
  Value cur = item;
  size_t i = 0;
  for (;;) {
    const size_t dot = path.find('.', i);
    const std::string part = path.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
    if (cur.kind == Value::Kind::list && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
      int64_t k = 0;
      cur = num::parse_int(part, 10, k) == num::Parse::ok && k < static_cast<int64_t>(cur.list->size())
                ? (*cur.list)[static_cast<size_t>(k)]
                : Value::undef(part);
    } else {
      cur = in.attribute(cur, part, false);
    }
    if (dot == std::string::npos) return cur;
    i = dot + 1;
  }
}

// sort/min/max/unique's key: the item or its attribute, strings lowercased unless
// case_sensitive.
Value sort_key(Interp& in, const Value& item, const Value& attribute, bool case_sensitive) {
  Value k = attribute.is_undefined() || attribute.kind == Value::Kind::none ? item : item_path(in, item, to_str(attribute));
  if (!case_sensitive && k.kind == Value::Kind::string) return Value::str(ascii_lower(k.text()));
  return k;
}

// A stable merge sort that only asks `less`, so an inconsistent comparison (NaN) cannot
// take it out of bounds as it could std::sort.
template <class Less>
void merge_sort(List& l, Less less) {
  if (l.size() < 2) return;
  List tmp(l.size());
  for (size_t width = 1; width < l.size(); width *= 2) {
    for (size_t lo = 0; lo < l.size(); lo += 2 * width) {
      const size_t mid = std::min(lo + width, l.size()), hi = std::min(lo + 2 * width, l.size());
      size_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) tmp[o++] = less(l[b], l[a]) ? l[b++] : l[a++];
      while (a < mid) tmp[o++] = l[a++];
      while (b < hi) tmp[o++] = l[b++];
    }
    l.swap(tmp);
  }
}

void check_hashable(Interp& in, const Value& v) {
  if (v.kind == Value::Kind::list || v.kind == Value::Kind::dict)
    in.fail(K::type, "unhashable type: '" + type_name(v) + "'");
}

Value select_or_reject(Interp& in, const Value& v, Args& a, bool select, bool by_attr) {
  // `if value:` in Jinja's select_or_reject: a falsy input yields nothing, even none.
  if (!truthy(v)) return Value::make_list();
  const size_t t0 = by_attr ? 1 : 0;
  const std::string attr = by_attr ? to_str(a.get(0, "attribute")) : std::string();
  const std::string test = a.pos.size() > t0 ? to_str(a.pos[t0]) : std::string();
  Args targs;
  for (size_t k = t0 + 1; k < a.pos.size(); ++k) targs.pos.push_back(a.pos[k]);
  List out;
  for (const auto& item : in.iterate(v)) {
    in.count_step();
    const Value x = by_attr ? item_path(in, item, attr) : item;
    const bool r = test.empty() ? truthy(x) : in.run_test(test, x, targs);
    if (r == select) out.push_back(item);
  }
  return Value::make_list(std::move(out));
}

Value min_or_max(Interp& in, const Value& v, Args& a, bool max) {
  const List l = in.iterate(v);
  if (l.empty()) return Value::undef();
  const bool cs = truthy(a.get(0, "case_sensitive", Value::boolean(false)));
  const Value attr = a.get(1, "attribute");
  Value best = l[0], best_key = sort_key(in, l[0], attr, cs);
  for (size_t k = 1; k < l.size(); ++k) {
    const Value key = sort_key(in, l[k], attr, cs);
    if (in.ordered(max ? ">" : "<", key, best_key)) best = l[k], best_key = key;
  }
  return best;
}

// math.ceil / math.floor of a float, as a float holding the exact integer. Python's result
// is an int, which has no negative zero: ceil(-0.3) is 0, and 0 / 10**n is 0.0.
double ceil_or_floor(Interp& in, double y, bool ceil) {
  if (std::isinf(y)) in.fail(K::type, "cannot convert float infinity to integer");
  if (std::isnan(y)) in.fail(K::type, "cannot convert float NaN to integer");
  const double r = ceil ? std::ceil(y) : std::floor(y);
  return r == 0 ? 0.0 : r;
}

// do_round: round(value, precision), or math.ceil/floor(value * 10**precision) / 10**precision.
Value round_filter(Interp& in, const Value& v, Args& a) {
  const Value m = a.get(1, "method", Value::str("common"));
  const std::string method = to_str(m);
  if (m.kind != Value::Kind::string || (method != "common" && method != "ceil" && method != "floor"))
    in.fail(K::type, "method must be common, ceil or floor");
  if (!v.is_number()) in.fail(K::type, "type " + type_name(v) + " doesn't define __round__ method");
  const int64_t p = int_arg(in, a.get(0, "precision", Value::integer(0)));
  if (method == "common") {
    if (v.kind != Value::Kind::floating) {
      const auto r = num::round(int_of(v), p);
      if (!r) in.overflow("round(" + to_str(v) + ", " + std::to_string(p) + ")");
      return Value::integer(*r);
    }
    const auto r = num::round(v.f, p);
    if (!r) in.fail(K::type, "rounded value too large to represent");
    return Value::floating(*r);
  }
  const bool ceil = method == "ceil";
  if (p >= 0) {
    // An integer times 10**p is exact in Python and divides back to itself.
    if (v.kind != Value::Kind::floating) return Value::floating(num::true_div(int_of(v), 1));
    if (p > 308) in.fail(K::type, "int too large to convert to float");
    const double scale = std::strtod(("1e" + std::to_string(p)).c_str(), nullptr);
    const double c = ceil_or_floor(in, v.f * scale, ceil);
    // int / int is correctly rounded in Python: the decimal c * 10**-p read by strtod is too.
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.0fe-%lld", c, static_cast<long long>(p));
    return Value::floating(std::strtod(buf, nullptr));
  }
  // 10**p with p < 0 is a float in Python, 0.0 from p = -324 on: then inf * 0.0 is NaN
  // (ValueError from math.ceil) and anything else divides by zero.
  const double scale = std::pow(10.0, static_cast<double>(std::max<int64_t>(p, -400)));
  const double c = ceil_or_floor(in, v.number() * scale, ceil);
  if (scale == 0) in.fail(K::type, "float division by zero");
  return Value::floating(c / scale);
}

// do_int: int(value) (int(value, base) for strings), else int(float(value)), else default.
Value int_filter(Interp& in, const Value& v, Args& a) {
  const Value def = a.get(0, "default", Value::integer(0));
  if (v.is_undefined()) undefined_error(in, v);  // Undefined.__int__ raises
  if (v.kind == Value::Kind::integer) return v;
  if (v.kind == Value::Kind::boolean) return Value::integer(v.b);
  double d = 0;
  if (v.kind == Value::Kind::floating) {
    // int(inf) raises OverflowError, which the first `except` does not catch.
    if (std::isinf(v.f)) in.fail(K::type, "cannot convert float infinity to integer");
    if (std::isnan(v.f)) return def;
    d = v.f;
  } else if (v.kind == Value::Kind::string) {
    const Value base = a.get(1, "base", Value::integer(10));
    int64_t out = 0;
    const auto r = base.kind == Value::Kind::integer || base.kind == Value::Kind::boolean
                       ? num::parse_int(v.text(), static_cast<int>(std::clamp<int64_t>(int_of(base), -1, 99)), out)
                       : num::Parse::invalid;
    if (r == num::Parse::ok) return Value::integer(out);
    if (r == num::Parse::overflow) in.overflow("int('" + v.text() + "')");
    // The fallback int(float(value)) catches OverflowError since Jinja2 3.1.5 (pallets/jinja
    // #1921, fixed by #1984): "1e400" gives the default. 3.1.6 renders 0, checked.
    const auto f = num::parse_float(v.text());
    if (!f || !std::isfinite(*f)) return def;
    d = *f;
  } else {
    return def;  // int(None), int([]), ... raise TypeError
  }
  const auto i = num::to_int(d);
  if (!i) in.overflow("int(" + float_repr(d) + ")");
  return Value::integer(*i);
}

// do_float: float(value), default on TypeError/ValueError.
Value float_filter(Interp& in, const Value& v, Args& a) {
  const Value def = a.get(0, "default", Value::floating(0));
  if (v.is_undefined()) undefined_error(in, v);  // Undefined.__float__ raises
  if (v.is_number()) return Value::floating(v.kind == Value::Kind::floating ? v.f : static_cast<double>(int_of(v)));
  if (v.kind == Value::Kind::string) {
    const auto f = num::parse_float(v.text());
    return f ? Value::floating(*f) : def;
  }
  return def;
}

Value indent_filter(Interp& in, const Value& v, Args& a) {
  // `s += "\n"` only works on a str: none, lists and dicts raise, undefined raises its own.
  if (v.is_undefined()) undefined_error(in, v);
  if (v.kind != Value::Kind::string)
    in.fail(K::type, "unsupported operand type(s) for +=: '" + type_name(v) + "' and 'str'");
  const Value w = a.get(0, "width", Value::integer(4));
  std::string pad;
  if (w.kind == Value::Kind::string) {
    pad = w.text();
  } else {
    const int64_t n = int_arg(in, w);
    in.check_size(static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(n, INT64_MAX / 2))), "indent");
    pad.assign(static_cast<size_t>(std::max<int64_t>(0, n)), ' ');
  }
  const bool first = truthy(a.get(1, "first", Value::boolean(false)));
  const bool blank = truthy(a.get(2, "blank", Value::boolean(false)));
  const std::vector<std::string> lines = splitlines(v.text() + "\n");
  in.check_size(v.text().size() + pad.size() * lines.size(), "indent");
  std::string r;
  for (size_t k = 0; k < lines.size(); ++k) {
    if (k > 0) r += '\n';
    if (k > 0 && (blank || !lines[k].empty())) r += pad;
    r += lines[k];
  }
  if (first) r = pad + r;
  return Value::str(std::move(r), v.safe);
}

Value center_filter(Interp& in, const Value& v, Args& a) {
  const std::string s = to_str(v);
  const int64_t width = int_arg(in, a.get(0, "width", Value::integer(80)));
  const auto n = static_cast<int64_t>(code_points(s));
  if (width <= n) return Value::str(s);
  in.check_size(static_cast<size_t>(width), "center");
  // CPython's str.center: the odd space goes left only when the width is odd too.
  const int64_t marg = width - n;
  const int64_t left = marg / 2 + (marg & width & 1);
  return Value::str(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(marg - left), ' '));
}

Value tojson_filter(Interp& in, const Value& v, Args& a) {
  // transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
  JsonOptions o;
  o.ensure_ascii = truthy(a.get(0, "ensure_ascii", Value::boolean(false)));
  const Value ind = a.get(1, "indent", Value::none());
  if (ind.kind == Value::Kind::string) {
    o.indent = ind.text();
  } else if (ind.kind != Value::Kind::none && !ind.is_undefined()) {
    const int64_t n = int_arg(in, ind);
    in.check_size(static_cast<size_t>(std::clamp<int64_t>(n, 0, INT64_MAX / 2)), "tojson indent");
    o.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, n)), ' ');
  }
  if (o.indent) o.item_sep = ",";
  const Value sep = a.get(2, "separators", Value::none());
  if (sep.kind == Value::Kind::list) {
    if (sep.list->size() != 2) in.fail(K::type, "tojson separators must be an (item_separator, key_separator) pair");
    o.item_sep = to_str((*sep.list)[0]);
    o.key_sep = to_str((*sep.list)[1]);
  }
  o.sort_keys = truthy(a.get(3, "sort_keys", Value::boolean(false)));
  o.max_size = in.opts_.max_output;
  std::string out, err;
  if (!to_json(v, out, o, err)) in.fail(out.size() > o.max_size ? K::limit : K::type, err);
  return Value::str(std::move(out));
}

Value reverse_filter(Interp& in, const Value& v, Args&) {
  if (v.kind == Value::Kind::string) {
    const List c = in.iterate(v);
    std::string r;
    for (auto it = c.rbegin(); it != c.rend(); ++it) r += it->text();
    return Value::str(std::move(r), v.safe);
  }
  if (!v.is_undefined() && v.kind != Value::Kind::list && !v.is_mapping()) in.fail(K::type, "argument must be iterable");
  List l = in.iterate(v);
  std::reverse(l.begin(), l.end());
  return Value::make_list(std::move(l));
}

Value sort_filter(Interp& in, const Value& v, Args& a) {
  List l = in.iterate(v);
  const bool rev = truthy(a.get(0, "reverse", Value::boolean(false)));
  const bool cs = truthy(a.get(1, "case_sensitive", Value::boolean(false)));
  const Value attr = a.get(2, "attribute");
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto& x : l) keyed.emplace_back(sort_key(in, x, attr, cs), x);
  List idx;
  for (size_t k = 0; k < keyed.size(); ++k) idx.push_back(Value::integer(static_cast<int64_t>(k)));
  merge_sort(idx, [&](const Value& x, const Value& y) {
    in.count_step();
    const Value& kx = keyed[static_cast<size_t>(x.i)].first;
    const Value& ky = keyed[static_cast<size_t>(y.i)].first;
    return rev ? in.ordered("<", ky, kx) : in.ordered("<", kx, ky);
  });
  List out;
  for (const auto& k : idx) out.push_back(keyed[static_cast<size_t>(k.i)].second);
  return Value::make_list(std::move(out));
}

Value dictsort_filter(Interp& in, const Value& v, Args& a) {
  if (v.is_undefined()) undefined_error(in, v);  // value.items() on Undefined
  if (v.kind != Value::Kind::dict) in.fail(K::type, "'" + type_name(v) + "' object has no attribute 'items'");
  const bool cs = truthy(a.get(0, "case_sensitive", Value::boolean(false)));
  const std::string by = to_str(a.get(1, "by", Value::str("key")));
  if (by != "key" && by != "value") in.fail(K::type, "You can only sort by either \"key\" or \"value\"");
  const bool rev = truthy(a.get(2, "reverse", Value::boolean(false)));
  List l;
  for (const auto& [k, x] : v.dict->items) l.push_back(Value::make_list({Value::str(k), x}));
  const size_t pos = by == "key" ? 0 : 1;
  merge_sort(l, [&](const Value& x, const Value& y) {
    in.count_step();
    const Value kx = sort_key(in, (*x.list)[pos], Value::undef(), cs), ky = sort_key(in, (*y.list)[pos], Value::undef(), cs);
    return rev ? in.ordered("<", ky, kx) : in.ordered("<", kx, ky);
  });
  return Value::make_list(std::move(l));
}

Value unique_filter(Interp& in, const Value& v, Args& a) {
  const bool cs = truthy(a.get(0, "case_sensitive", Value::boolean(false)));
  const Value attr = a.get(1, "attribute");
  List out, seen;
  for (const auto& item : in.iterate(v)) {
    const Value key = sort_key(in, item, attr, cs);
    check_hashable(in, key);
    bool dup = false;
    for (const auto& s : seen) {
      in.count_step();
      if (equal(s, key)) {
        dup = true;
        break;
      }
    }
    if (!dup) seen.push_back(key), out.push_back(item);
  }
  return Value::make_list(std::move(out));
}

Value map_filter(Interp& in, const Value& v, Args& a) {
  if (!truthy(v)) return Value::make_list();  // `if value:` in do_map
  List out;
  const Value attr = a.get(99, "attribute");
  for (const auto& item : in.iterate(v)) {
    in.count_step();
    if (!attr.is_undefined()) {
      Value x = item_path(in, item, to_str(attr));
      if (x.is_undefined()) x = a.get(99, "default", x);
      out.push_back(x);
    } else {
      if (a.pos.empty()) in.fail(K::type, "map requires a filter argument");
      Args fa;
      for (size_t k = 1; k < a.pos.size(); ++k) fa.pos.push_back(a.pos[k]);
      fa.kw = a.kw;
      out.push_back(in.call_filter(to_str(a.pos[0]), item, fa));
    }
  }
  return Value::make_list(std::move(out));
}

Value batch_filter(Interp& in, const Value& v, Args& a) {
  const Value n = a.get(0, "linecount");
  const Value fill = a.get(1, "fill_with", Value::none());
  List out, cur;
  for (const auto& item : in.iterate(v)) {
    in.count_step();
    if (equal(Value::integer(static_cast<int64_t>(cur.size())), n)) out.push_back(Value::make_list(std::exchange(cur, {})));
    cur.push_back(item);
  }
  if (!cur.empty()) {
    if (fill.kind != Value::Kind::none && in.ordered("<", Value::integer(static_cast<int64_t>(cur.size())), n)) {
      const int64_t want = int_arg(in, n);
      while (static_cast<int64_t>(cur.size()) < want) {
        in.count_step();
        cur.push_back(fill);
      }
    }
    out.push_back(Value::make_list(std::move(cur)));
  }
  return Value::make_list(std::move(out));
}

Value replace_filter(Interp& in, const Value& v, Args& a) {
  const Value c = a.get(2, "count", Value::none());
  const int64_t count = c.kind == Value::Kind::none ? -1 : int_arg(in, c);
  const std::string s = to_str(v), from = to_str(a.get(0, "old")), to = to_str(a.get(1, "new"));
  if (from.empty()) in.check_size(s.size() + to.size() * (code_points(s) + 1), "replace");
  return Value::str(replace(s, from, to, count));
}

Value join_filter(Interp& in, const Value& v, Args& a) {
  const Value attr = a.get(1, "attribute");
  const std::string sep = to_str(a.get(0, "d", Value::str("")));
  const List items = in.iterate(v);
  std::string r;
  for (size_t k = 0; k < items.size(); ++k) {
    if (k) r += sep;
    r += to_str(attr.is_undefined() || attr.kind == Value::Kind::none ? items[k] : item_path(in, items[k], to_str(attr)));
    in.check_size(r.size(), "join");
  }
  return Value::str(std::move(r));
}

Value sum_filter(Interp& in, const Value& v, Args& a) {
  const Value attr = a.get(0, "attribute");
  Value acc = a.get(1, "start", Value::integer(0));
  for (const auto& x : in.iterate(v)) {
    in.count_step();
    acc = in.binary("+", acc, attr.is_undefined() || attr.kind == Value::Kind::none ? x : item_path(in, x, to_str(attr)));
  }
  return acc;
}

Value length_filter(Interp& in, const Value& v, Args&) {
  if (v.kind == Value::Kind::string) return Value::integer(static_cast<int64_t>(code_points(v.text())));
  if (v.kind == Value::Kind::list) return Value::integer(static_cast<int64_t>(v.list->size()));
  if (v.is_mapping()) return Value::integer(static_cast<int64_t>(v.dict->items.size()));
  if (v.is_undefined()) return Value::integer(0);
  in.fail(K::type, "object of type '" + type_name(v) + "' has no len()");
}

Value first_or_last(Interp& in, const Value& v, bool first) {
  if (!first && !v.is_undefined() && v.kind != Value::Kind::string && v.kind != Value::Kind::list && !v.is_mapping())
    in.fail(K::type, "'" + type_name(v) + "' object is not reversible");
  const List items = in.iterate(v);
  if (items.empty()) return Value::undef();
  return first ? items.front() : items.back();
}

Value attr_filter(Interp& in, const Value& v, Args& a) {
  if (v.is_undefined()) undefined_error(in, v);  // getattr on Undefined raises
  const std::string name = to_str(a.get(0, "name"));
  // A dict's keys are not attributes (do_attr never falls back to the item).
  if (v.kind == Value::Kind::dict && name != "items" && name != "keys" && name != "values" && name != "get") return Value::undef(name);
  return in.attribute(v, name, true);
}

Value abs_filter(Interp& in, const Value& v, Args&) {
  if (v.kind == Value::Kind::floating) return Value::floating(std::fabs(v.f));
  if (v.kind == Value::Kind::integer || v.kind == Value::Kind::boolean) {
    const int64_t x = int_of(v);
    if (x >= 0) return Value::integer(x);
    const auto r = num::neg(x);
    if (!r) in.overflow("abs(" + std::to_string(x) + ")");
    return Value::integer(*r);
  }
  in.fail(K::type, "bad operand type for abs(): '" + type_name(v) + "'");
}

Value wordcount_filter(Interp&, const Value& v, Args&) {
  // len(re.findall(r"\w+", str(s))): runs of letters, digits and underscores.
  const std::string s = to_str(v);
  int64_t n = 0;
  bool in_word = false;
  for (unsigned char c : s) {
    const bool w = std::isalnum(c) || c == '_' || c >= 0x80;
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::integer(n);
}

Value default_filter(Interp&, const Value& v, Args& a) {
  const bool boolean = truthy(a.get(1, "boolean", Value::boolean(false)));
  if (v.is_undefined() || (boolean && !truthy(v))) return a.get(0, "default_value", Value::str(""));
  return v;
}

Value items_filter(Interp& in, const Value& v, Args&) {
  if (v.is_undefined()) return Value::make_list();
  if (!v.is_mapping()) in.fail(K::type, "Can only get item pairs from a mapping.");
  List l;
  for (const auto& [k, x] : v.dict->items) l.push_back(Value::make_list({Value::str(k), x}));
  return Value::make_list(std::move(l));
}

Value escape_filter(Interp&, const Value& v, Args&) {
  if (v.safe && v.kind == Value::Kind::string) return v;
  return Value::str(html_escape(to_str(v)), true);
}

Value trim_filter(Interp&, const Value& v, Args& a) {
  const Value chars = a.get(0, "chars", Value::none());
  return Value::str(strip(to_str(v), chars.kind == Value::Kind::string ? &chars.text() : nullptr, true, true));
}

const std::map<std::string, Filter>& table() {
  static const std::map<std::string, Filter> t{
      {"abs", abs_filter},
      {"attr", attr_filter},
      {"batch", batch_filter},
      {"capitalize", [](Interp&, const Value& v, Args&) { return Value::str(capitalize(to_str(v))); }},
      {"center", center_filter},
      {"count", length_filter},
      {"d", default_filter},
      {"default", default_filter},
      {"dictsort", dictsort_filter},
      {"e", escape_filter},
      {"escape", escape_filter},
      {"first", [](Interp& in, const Value& v, Args&) { return first_or_last(in, v, true); }},
      {"float", float_filter},
      {"indent", indent_filter},
      {"int", int_filter},
      {"items", items_filter},
      {"join", join_filter},
      {"last", [](Interp& in, const Value& v, Args&) { return first_or_last(in, v, false); }},
      {"length", length_filter},
      {"list", [](Interp& in, const Value& v, Args&) { return Value::make_list(in.iterate(v)); }},
      {"lower", [](Interp&, const Value& v, Args&) { return Value::str(ascii_lower(to_str(v))); }},
      {"map", map_filter},
      {"max", [](Interp& in, const Value& v, Args& a) { return min_or_max(in, v, a, true); }},
      {"min", [](Interp& in, const Value& v, Args& a) { return min_or_max(in, v, a, false); }},
      {"reject", [](Interp& in, const Value& v, Args& a) { return select_or_reject(in, v, a, false, false); }},
      {"rejectattr", [](Interp& in, const Value& v, Args& a) { return select_or_reject(in, v, a, false, true); }},
      {"replace", replace_filter},
      {"reverse", reverse_filter},
      {"round", round_filter},
      {"safe", [](Interp&, const Value& v, Args&) { return Value::str(to_str(v), true); }},
      {"select", [](Interp& in, const Value& v, Args& a) { return select_or_reject(in, v, a, true, false); }},
      {"selectattr", [](Interp& in, const Value& v, Args& a) { return select_or_reject(in, v, a, true, true); }},
      {"sort", sort_filter},
      {"string", [](Interp&, const Value& v, Args&) { return v.kind == Value::Kind::string ? v : Value::str(to_str(v)); }},
      {"sum", sum_filter},
      {"title", [](Interp&, const Value& v, Args&) { return Value::str(jinja_title(to_str(v))); }},
      {"tojson", tojson_filter},
      {"trim", trim_filter},
      {"unique", unique_filter},
      {"upper", [](Interp&, const Value& v, Args&) { return Value::str(ascii_upper(to_str(v))); }},
      {"wordcount", wordcount_filter},
  };
  return t;
}

}  // namespace

Value Interp::call_filter(const std::string& name, const Value& v, Args& a) {
  const auto& t = table();
  const auto it = t.find(name);
  if (it == t.end()) fail(K::type, "no filter named '" + name + "'");
  return it->second(*this, v, a);
}

std::vector<std::string> filter_names() {
  std::vector<std::string> names;
  for (const auto& [k, f] : table()) names.push_back(k);
  return names;
}

}  // namespace sy::chat
