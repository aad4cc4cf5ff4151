// Prefixes of JSON texts (RFC 8259), one byte at a time: whether the bytes so far can still
// grow into a valid text, and whether the text may end here. Constrained decoding copies the
// state once per candidate token, so it is a small trivially copyable value: the stack of open
// containers is a bit mask (nesting is capped at kMaxDepth) and nothing is ever allocated.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace sy::serving {

/// What the top-level value may be: any JSON value, or only an object (OpenAI's json_object).
enum class JsonTop : uint8_t { any, object };

/// A pushdown recognizer of JSON text prefixes. Beyond RFC 8259 it refuses:
/// - more than kMaxDepth arrays and objects open at once;
/// - more than kMaxSpaces whitespace bytes in a row outside strings (a model could otherwise
///   pad forever and still be "valid");
/// - strings that are not Unicode: invalid UTF-8 (overlong forms, encoded surrogates, code
///   points above U+10FFFF) and \u escapes of unpaired surrogates. RFC 8259's grammar admits
///   the latter but calls their handling unpredictable (section 8.2); strict parsers refuse them.
class JsonPrefix {
 public:
  static constexpr int kMaxDepth = 64;
  static constexpr int kMaxSpaces = 32;

  /// The empty prefix.
  explicit JsonPrefix(JsonTop top = JsonTop::object) : top_(top) {}

  /// Appends one byte. Returns false when no valid text starts with the bytes so far; the
  /// state is then failed() for good.
  bool push(uint8_t byte);
  /// Appends bytes in order; false as soon as one is refused (see push(uint8_t)).
  bool push(std::string_view bytes);

  /// The bytes so far are a whole JSON text: it may end here.
  [[nodiscard]] bool complete() const;
  /// The top-level value is closed: nothing but whitespace may follow. (A top-level number
  /// may be complete() yet still grow, so it is not closed until a byte ends it.)
  [[nodiscard]] bool closed() const { return lex_ == Lex::done; }
  /// A byte was refused.
  [[nodiscard]] bool failed() const { return lex_ == Lex::dead; }
  /// Arrays and objects open now.
  [[nodiscard]] int depth() const { return depth_; }
  /// Inside a string between characters (not in an escape or a UTF-8 sequence): then bytes
  /// without '"', '\\', control characters or incomplete UTF-8 leave the state as it is.
  [[nodiscard]] bool in_string_text() const { return lex_ == Lex::string; }

 private:
  enum class Lex : uint8_t {
    value,           // a value must start (the start, after ':', after ',' in an array)
    value_or_close,  // after '[': a value or ']'
    key_or_close,    // after '{': a key or '}'
    key,             // after ',' in an object
    colon,           // after a key
    comma_or_close,  // after a value inside a container
    done,            // the top-level value is closed
    string,          // inside a string, between characters
    escape,          // after '\'
    hex,             // in \uXXXX: count_ digits left
    low_backslash,   // after a high-surrogate escape: its low half must follow
    low_u,
    utf8,            // count_ continuation bytes left, the next in [lo_, hi_]
    minus,           // numbers: after '-'
    zero,            // the integer part is "0"
    int_digits,
    dot,             // after '.': a digit must follow
    frac,
    exp,             // after 'e': a sign or a digit
    exp_sign,        // after the exponent's sign: a digit
    exp_digits,
    literal,         // count_ indexes the next expected byte of "truefalsenull"
    dead,
  };
  // Within one \u escape: what the digits so far say about surrogates.
  enum class Surrogate : uint8_t { none, first_d, high, low_first, low_second };

  bool structural(uint8_t c);
  bool start_value(uint8_t c);
  bool string_byte(uint8_t c);
  bool hex_digit(uint8_t c);
  bool open(bool object);
  bool close();
  bool end_value();
  bool fail();
  [[nodiscard]] bool top_is_object() const { return (stack_ >> (depth_ - 1)) & 1u; }

  uint64_t stack_ = 0;  // bit i: container i (outermost 0) is an object
  Lex lex_ = Lex::value;
  JsonTop top_;
  uint8_t depth_ = 0;
  uint8_t count_ = 0;
  uint8_t lo_ = 0, hi_ = 0;
  uint8_t spaces_ = 0;  // whitespace bytes in a row outside strings
  Surrogate surrogate_ = Surrogate::none;
  bool key_ = false;  // the open string is an object key
};

static_assert(std::is_trivially_copyable_v<JsonPrefix>);
static_assert(JsonPrefix::kMaxDepth <= 64, "the container stack is one 64-bit mask");

}  // namespace sy::serving
