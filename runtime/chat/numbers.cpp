#include "chat/numbers.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace sy::chat::num {

// GCC and Clang have 128-bit integers; __extension__ keeps -Wpedantic quiet about them.
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

std::optional<int64_t> add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> neg(int64_t a) { return sub(0, a); }

std::optional<int64_t> pow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) {
      const auto r = mul(result, base);
      if (!r) return std::nullopt;
      result = *r;
    }
    exp >>= 1;
    if (exp > 0) {
      const auto b = mul(base, base);
      if (!b) return std::nullopt;
      base = *b;
    }
  }
  return result;
}

std::optional<int64_t> floordiv(int64_t a, int64_t b) {
  if (b == -1) return neg(a);  // INT64_MIN // -1 is 2**63
  int64_t q = a / b;
  const int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) --q;
  return q;
}

int64_t mod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // INT64_MIN % -1 traps in C++, and is 0 in Python
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

double true_div(int64_t a, int64_t b) {
  // The quotient of the magnitudes as a 128-bit fixed-point number with at least 63
  // significant bits, its lowest bit set when inexact (rounding to odd), so that the one
  // rounding to double is the correct one.
  const bool negative = (a < 0) != (b < 0);
  const u128 ua = a < 0 ? u128(0) - u128(a) : u128(a);  // well defined for INT64_MIN
  const u128 ub = b < 0 ? u128(0) - u128(b) : u128(b);
  if (ua == 0) return negative ? -0.0 : 0.0;
  int bits = 0;
  for (u128 t = ua; t; t >>= 1) ++bits;
  const int shift = 126 - bits;
  const u128 num = ua << shift;
  u128 q = num / ub;
  if (num % ub != 0) q |= 1;
  const double r = std::ldexp(static_cast<double>(q), -shift);
  return negative ? -r : r;
}

double mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0) {
    if ((b < 0) != (m < 0)) m += b;
  } else {
    m = std::copysign(0.0, b);
  }
  return m;
}

double floordiv(double a, double b) {
  double m = std::fmod(a, b);
  double div = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double f = std::floor(div);
  if (div - f > 0.5) f += 1.0;
  return f;
}

std::optional<int64_t> to_int(double d) {
  if (!std::isfinite(d)) return std::nullopt;
  const double t = std::trunc(d);
  if (t >= 9223372036854775808.0 || t < -9223372036854775808.0) return std::nullopt;
  return static_cast<int64_t>(t);
}

std::partial_ordering compare(int64_t a, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  if (d >= 9223372036854775808.0) return std::partial_ordering::less;
  if (d < -9223372036854775808.0) return std::partial_ordering::greater;
  const double t = std::trunc(d);
  const auto ti = static_cast<int64_t>(t);
  if (a != ti) return a < ti ? std::partial_ordering::less : std::partial_ordering::greater;
  const double frac = d - t;
  return frac > 0 ? std::partial_ordering::less : frac < 0 ? std::partial_ordering::greater : std::partial_ordering::equivalent;
}

namespace {

bool py_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && py_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && py_space(s.back())) s.remove_suffix(1);
  return s;
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Digits of `s` in `base` with single underscores between digits (and, after a prefix,
// one before the first); appends the digits to `out`.
bool digits_with_underscores(std::string_view s, int base, bool lead_underscore_ok, std::string& out) {
  if (s.empty()) return false;
  bool prev_digit = lead_underscore_ok;
  for (char c : s) {
    if (c == '_') {
      if (!prev_digit) return false;
      prev_digit = false;
      continue;
    }
    if (digit_value(c) >= base) return false;
    out += c;
    prev_digit = true;
  }
  return prev_digit;
}

}  // namespace

Parse parse_int(std::string_view s, int base, int64_t& out) {
  if (base != 0 && (base < 2 || base > 36)) return Parse::invalid;
  s = trim(s);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  bool prefixed = false;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    const int pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (pb != 0 && (base == 0 || base == pb)) {
      base = pb;
      prefixed = true;
      s.remove_prefix(2);
    }
  }
  std::string digits;
  if (!digits_with_underscores(s, base == 0 ? 10 : base, prefixed, digits)) return Parse::invalid;
  if (base == 0) {
    // Base 0 reads decimals as Python source does: no leading zeros except for zero itself.
    if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos) return Parse::invalid;
    base = 10;
  }
  u128 v = 0;
  const u128 limit = negative ? (u128(1) << 63) : (u128(1) << 63) - 1;
  for (char c : digits) {
    v = v * static_cast<unsigned>(base) + static_cast<unsigned>(digit_value(c));
    if (v > limit) return Parse::overflow;
  }
  out = negative ? static_cast<int64_t>(u128(0) - v) : static_cast<int64_t>(v);
  return Parse::ok;
}

std::optional<double> parse_float(std::string_view s) {
  s = trim(s);
  std::string clean;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    clean += s[0];
    s.remove_prefix(1);
  }
  std::string lower;
  for (char c : s) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  if (lower == "inf" || lower == "infinity") return clean == "-" ? -HUGE_VAL : HUGE_VAL;
  if (lower == "nan") return std::nan("");
  // digitpart ["." [digitpart]] | "." digitpart, then an optional exponent.
  size_t i = 0;
  auto digitpart = [&]() {
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    std::string d;
    if (j == i || !digits_with_underscores(s.substr(i, j - i), 10, false, d)) return false;
    clean += d;
    i = j;
    return true;
  };
  const bool int_part = i < s.size() && s[i] != '.' && digitpart();
  if (!int_part && !(i < s.size() && s[i] == '.')) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    clean += '.';
    ++i;
    const bool frac = i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && digitpart();
    if (!int_part && !frac) return std::nullopt;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    clean += 'e';
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
    if (!digitpart()) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  return std::strtod(clean.c_str(), nullptr);
}

std::optional<double> round(double x, int64_t ndigits) {
  // CPython's limits: beyond them the result is x itself, or a zero with x's sign.
  if (!std::isfinite(x) || ndigits > 323) return x;
  if (ndigits < -308) return 0.0 * x;
  // The exact decimal expansion of |x| (1100 places hold every bit of a double).
  static thread_local char buf[1600];
  std::snprintf(buf, sizeof buf, "%.1100f", std::fabs(x));
  std::string digits(buf);
  const size_t point = digits.find('.');
  digits.erase(point, 1);
  const auto k = static_cast<int64_t>(point) + ndigits;  // digits kept
  if (k >= static_cast<int64_t>(digits.size())) return x;
  std::string kept = k > 0 ? digits.substr(0, static_cast<size_t>(k)) : std::string();
  if (k >= 0) {
    const char first = digits[static_cast<size_t>(k)];
    const bool rest = digits.find_first_not_of('0', static_cast<size_t>(k) + 1) != std::string::npos;
    const bool odd = !kept.empty() && ((kept.back() - '0') & 1);
    if (first > '5' || (first == '5' && (rest || odd))) {
      size_t p = kept.size();
      while (p > 0 && kept[p - 1] == '9') kept[--p] = '0';
      if (p == 0) kept.insert(kept.begin(), '1');
      else ++kept[p - 1];
    }
  }
  if (kept.empty()) kept = "0";
  const std::string text = kept + "e" + std::to_string(static_cast<int64_t>(point) - k);
  errno = 0;
  const double r = std::strtod(text.c_str(), nullptr);
  if (std::isinf(r)) return std::nullopt;
  return std::signbit(x) ? -r : r;
}

std::optional<int64_t> round(int64_t x, int64_t ndigits) {
  if (ndigits >= 0) return x;
  if (ndigits < -19) return 0;  // |x| < 10**19 < 5 * 10**19: rounds to zero
  i128 p = 1;
  for (int64_t k = 0; k < -ndigits; ++k) p *= 10;
  const i128 v = x;
  i128 q = v / p, r = v % p;
  if (r < 0) r += p, --q;
  if (2 * r > p || (2 * r == p && (q & 1))) ++q;
  const i128 result = q * p;
  if (result > std::numeric_limits<int64_t>::max() || result < std::numeric_limits<int64_t>::min()) return std::nullopt;
  return static_cast<int64_t>(result);
}

uint64_t range_length(int64_t start, int64_t stop, int64_t step) {
  // Differences in unsigned arithmetic are exact: the span of two int64 is below 2**64.
  if (step > 0) return start >= stop ? 0 : (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) / static_cast<uint64_t>(step) + 1;
  if (start <= stop) return 0;
  return (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) / (uint64_t{0} - static_cast<uint64_t>(step)) + 1;
}

int64_t range_item(int64_t start, int64_t step, uint64_t k) {
  // Wraps through uint64 and lands on the item, which lies between start and stop.
  return static_cast<int64_t>(static_cast<uint64_t>(start) + k * static_cast<uint64_t>(step));
}

}  // namespace sy::chat::num
