// Python's number semantics on the interpreter's 64-bit integers and doubles: arithmetic
// that reports overflow instead of wrapping, floor division and modulo as Python floors
// them, exact comparisons between integers and floats, round(), and int()/float() of
// strings. Templates never reach a C++ conversion whose result is undefined.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sy::chat::num {

// Checked integer arithmetic: nullopt where Python's result is beyond 64 bits.
std::optional<int64_t> add(int64_t a, int64_t b);
std::optional<int64_t> sub(int64_t a, int64_t b);
std::optional<int64_t> mul(int64_t a, int64_t b);
std::optional<int64_t> neg(int64_t a);
std::optional<int64_t> pow(int64_t base, int64_t exp);  // exp >= 0
// Python's a // b and a % b (b != 0): the quotient floors, the remainder takes b's sign.
std::optional<int64_t> floordiv(int64_t a, int64_t b);
int64_t mod(int64_t a, int64_t b);
// Python's int / int: the correctly rounded quotient (b != 0).
double true_div(int64_t a, int64_t b);

// Python's float // and % (b != 0), from fmod as CPython's float_divmod does.
double floordiv(double a, double b);
double mod(double a, double b);

// The integer part of d when it fits in 64 bits (nullopt for NaN, infinities and beyond).
std::optional<int64_t> to_int(double d);

// Exact comparison of an integer with a float (unordered when d is NaN).
std::partial_ordering compare(int64_t a, double d);

// Python's int(s, base) for base 0 or 2..36: whitespace around, a sign, the base's prefix
// (0x, 0o, 0b), and single underscores between digits.
enum class Parse { ok, invalid, overflow };
Parse parse_int(std::string_view s, int base, int64_t& out);
// Python's float(s): decimal with underscores between digits, inf, infinity, nan.
std::optional<double> parse_float(std::string_view s);

// Python's round(x, ndigits) for a float: the exact binary value rounded half to even at
// the decimal position `ndigits` (negative: left of the point).
std::optional<double> round(double x, int64_t ndigits);  // nullopt: too large (OverflowError)
// Python's round(i, ndigits) for an integer (unchanged for ndigits >= 0).
std::optional<int64_t> round(int64_t x, int64_t ndigits);

// len(range(start, stop, step)) (step != 0), exact up to 2**64 - 1, and its k-th item.
uint64_t range_length(int64_t start, int64_t stop, int64_t step);
int64_t range_item(int64_t start, int64_t step, uint64_t k);

}  // namespace sy::chat::num
