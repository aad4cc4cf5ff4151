// Python's arithmetic on the interpreter's values: integers never wrap (a result beyond
// 64 bits is an error naming the expression), floats follow CPython's floor division,
// modulo and pow, and sequence repetition is bounded by the output limit.
#include <cmath>

#include "chat/interp.hpp"
#include "chat/numbers.hpp"

namespace sy::chat {
namespace {
using K = RenderFailure::Kind;
}  // namespace

void Interp::overflow(const std::string& expression) const {
  fail(K::limit, "integer overflow: " + expression + " is beyond the 64-bit integers templates support");
}

void Interp::check_size(size_t n, const char* what) const {
  if (n > opts_.max_output) fail(K::limit, std::string(what) + " past the output limit of " + std::to_string(opts_.max_output) + " bytes");
}

Value Interp::int_arith(const std::string& op, int64_t x, int64_t y) {
  const std::string text = std::to_string(x) + (op == "**" ? op : " " + op + " ") + std::to_string(y);
  auto checked = [&](std::optional<int64_t> r) {
    if (!r) overflow(text);
    return Value::integer(*r);
  };
  if (op == "+") return checked(num::add(x, y));
  if (op == "-") return checked(num::sub(x, y));
  if (op == "*") return checked(num::mul(x, y));
  if (op == "/") {
    if (y == 0) fail(K::type, "division by zero");
    return Value::floating(num::true_div(x, y));
  }
  if (op == "//" || op == "%") {
    if (y == 0) fail(K::type, "integer division or modulo by zero");
    return op == "%" ? Value::integer(num::mod(x, y)) : checked(num::floordiv(x, y));
  }
  if (op == "**") {
    if (y >= 0) return checked(num::pow(x, y));
    // A negative exponent makes a float, as in Python.
    return float_pow(static_cast<double>(x), static_cast<double>(y));
  }
  fail(K::type, "unsupported operator " + op);
}

Value Interp::float_pow(double x, double y) {
  if (x == 0 && y < 0) fail(K::type, "0.0 cannot be raised to a negative power");
  if (x < 0 && std::isfinite(y) && y != std::floor(y))
    fail(K::type, "(" + float_repr(x) + ") ** " + float_repr(y) + " is a complex number, which templates do not support");
  const double r = std::pow(x, y);
  if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
    fail(K::type, "float overflow: " + float_repr(x) + " ** " + float_repr(y) + " is out of range");
  return Value::floating(r);
}

Value Interp::repeat(const Value& seq, int64_t n) {
  const bool is_str = seq.kind == Value::Kind::string;
  const size_t size = is_str ? seq.text().size() : seq.list->size();
  if (n <= 0 || size == 0) return is_str ? Value::str("") : Value::make_list();
  // Compared by division so that size * n cannot overflow.
  if (static_cast<uint64_t>(n) > opts_.max_output / size)
    fail(K::limit, std::string(is_str ? "string" : "list") + " repetition past the output limit");
  if (is_str) {
    std::string r;
    r.reserve(size * static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) r += seq.text();
    return Value::str(std::move(r));
  }
  List l;
  for (int64_t k = 0; k < n; ++k)
    for (const auto& x : *seq.list) {
      count_step();
      l.push_back(x);
    }
  return Value::make_list(std::move(l));
}

bool Interp::ordered(const std::string& op, const Value& a, const Value& b) {
  std::partial_ordering c = std::partial_ordering::unordered;
  if (a.is_number() && b.is_number()) {
    c = compare_numbers(a, b);
  } else if (a.kind == Value::Kind::string && b.kind == Value::Kind::string) {
    c = a.text().compare(b.text()) <=> 0;  // UTF-8 bytes order as code points do
  } else if (a.kind == Value::Kind::list && b.kind == Value::Kind::list) {
    // Lexicographic: the first unequal items decide, else the shorter list is smaller.
    const size_t n = std::min(a.list->size(), b.list->size());
    for (size_t i = 0; i < n; ++i) {
      count_step();
      const Value& x = (*a.list)[i];
      const Value& y = (*b.list)[i];
      if (equal(x, y)) continue;
      if (op == "<" || op == "<=") return ordered("<", x, y);
      return ordered(">", x, y);
    }
    c = a.list->size() <=> b.list->size();
  } else {
    if (a.is_undefined() || b.is_undefined()) {
      const Value& u = a.is_undefined() ? a : b;
      fail(K::undefined, "'" + (u.undefined_name.empty() ? "value" : u.undefined_name) + "' is undefined");
    }
    fail(K::type, "'" + op + "' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
  }
  if (op == "<") return c < 0;
  if (op == ">") return c > 0;
  if (op == "<=") return c <= 0;
  return c >= 0;
}

}  // namespace sy::chat
