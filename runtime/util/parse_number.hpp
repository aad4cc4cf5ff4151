// Checked number parsing for everything a user types: std::from_chars, the whole text,
// and a range. std::stoi/stoul throw on overflow (which killed the process) and a cast of
// an out-of-range double to an integer is undefined behaviour, so text becomes a number
// only here, and a double becomes an integer only through to_integer().
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace sy::util {

/// Why a text is not a number in range.
enum class NumberError { none, malformed, out_of_range };

template <class T>
struct Parsed {
  T value{};
  NumberError error = NumberError::none;
  [[nodiscard]] bool ok() const { return error == NumberError::none; }
};

/// A decimal integer spelling the whole text (an optional leading '+', no spaces) within
/// [lo, hi]; anything beyond the type's range is out_of_range, not malformed.
template <class T>
Parsed<T> parse_integer(std::string_view s, T lo = std::numeric_limits<T>::min(),
                        T hi = std::numeric_limits<T>::max()) {
  static_assert(std::is_integral_v<T>);
  const char* b = s.data();
  const char* e = s.data() + s.size();
  // from_chars takes no '+' but does take '-', so after a skipped '+' a '-' would be read
  // as the sign ("+-5" as -5): one sign at most.
  if (b != e && *b == '+') {
    ++b;
    if (b != e && *b == '-') return {T{}, NumberError::malformed};
  }
  if (b == e) return {T{}, NumberError::malformed};
  T v{};
  const auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range && p == e) return {T{}, NumberError::out_of_range};
  // An unsigned type reads "-1" as malformed; it is a number, just out of range.
  if (ec == std::errc::invalid_argument && std::is_unsigned_v<T> && *b == '-' && b + 1 != e) {
    Parsed<long long> any = parse_integer<long long>(std::string_view(b, static_cast<size_t>(e - b)));
    if (any.ok() || any.error == NumberError::out_of_range) return {T{}, NumberError::out_of_range};
  }
  if (ec != std::errc() || p != e) return {T{}, NumberError::malformed};
  if (v < lo || v > hi) return {v, NumberError::out_of_range};
  return {v, NumberError::none};
}

/// A finite decimal number spelling the whole text (no "nan", "inf" or hex).
inline Parsed<double> parse_finite(std::string_view s) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') {
    ++b;
    if (b != e && *b == '-') return {0, NumberError::malformed};  // one sign at most, as above
  }
  if (b == e) return {0, NumberError::malformed};
  double v = 0;
  const auto [p, ec] = std::from_chars(b, e, v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range && p == e) return {0, NumberError::out_of_range};
  if (ec != std::errc() || p != e) return {0, NumberError::malformed};
  if (!std::isfinite(v)) return {0, NumberError::malformed};
  return {v, NumberError::none};
}

/// `v` as T when it is finite and within T's range (no rounding: the caller rounds first).
/// The bounds are compared as powers of two, which doubles hold exactly.
template <class T>
std::optional<T> to_integer(double v) {
  static_assert(std::is_integral_v<T>);
  if (!std::isfinite(v)) return std::nullopt;
  constexpr int bits = std::numeric_limits<T>::digits;  // 63 for int64_t, 64 for uint64_t
  const double upper = std::ldexp(1.0, bits);           // first value past the top
  const double lower = std::is_signed_v<T> ? -upper : 0.0;
  if (v < lower || v >= upper) return std::nullopt;
  return static_cast<T>(v);
}

}  // namespace sy::util
