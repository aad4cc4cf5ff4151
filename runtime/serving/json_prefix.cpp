#include "serving/json_prefix.hpp"

namespace sy::serving {

namespace {

// The three literals back to back; a literal's state is the index of its next byte, and it
// ends where the next one begins.
constexpr std::string_view kLiterals = "truefalsenull";
constexpr uint8_t kTrue = 0, kFalse = 4, kNull = 9;

bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

int hex_value(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool JsonPrefix::push(std::string_view bytes) {
  for (char c : bytes)
    if (!push(static_cast<uint8_t>(c))) return false;
  return true;
}

bool JsonPrefix::push(uint8_t c) {
  // A number has no closing byte: the byte after it ends it and is then read as what follows.
  switch (lex_) {
    case Lex::string: return string_byte(c);
    case Lex::escape:
      switch (c) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
          lex_ = Lex::string;
          return true;
        case 'u':
          lex_ = Lex::hex;
          count_ = 4;
          surrogate_ = Surrogate::none;
          return true;
        default: return fail();
      }
    case Lex::hex: return hex_digit(c);
    case Lex::low_backslash:
      if (c != '\\') return fail();
      lex_ = Lex::low_u;
      return true;
    case Lex::low_u:
      if (c != 'u') return fail();
      lex_ = Lex::hex;
      count_ = 4;
      surrogate_ = Surrogate::low_first;
      return true;
    case Lex::utf8:
      if (c < lo_ || c > hi_) return fail();
      lo_ = 0x80;
      hi_ = 0xBF;
      if (--count_ == 0) lex_ = Lex::string;
      return true;
    case Lex::minus:
      if (!is_digit(c)) return fail();
      lex_ = c == '0' ? Lex::zero : Lex::int_digits;
      return true;
    case Lex::zero:
    case Lex::int_digits:
      if (lex_ == Lex::int_digits && is_digit(c)) return true;
      if (c == '.') {
        lex_ = Lex::dot;
        return true;
      }
      if (c == 'e' || c == 'E') {
        lex_ = Lex::exp;
        return true;
      }
      end_value();
      return structural(c);
    case Lex::dot:
      if (!is_digit(c)) return fail();
      lex_ = Lex::frac;
      return true;
    case Lex::frac:
      if (is_digit(c)) return true;
      if (c == 'e' || c == 'E') {
        lex_ = Lex::exp;
        return true;
      }
      end_value();
      return structural(c);
    case Lex::exp:
      if (c == '+' || c == '-') {
        lex_ = Lex::exp_sign;
        return true;
      }
      [[fallthrough]];
    case Lex::exp_sign:
      if (!is_digit(c)) return fail();
      lex_ = Lex::exp_digits;
      return true;
    case Lex::exp_digits:
      if (is_digit(c)) return true;
      end_value();
      return structural(c);
    case Lex::literal:
      if (c != static_cast<uint8_t>(kLiterals[count_])) return fail();
      ++count_;
      if (count_ == kFalse || count_ == kNull || count_ == kLiterals.size()) return end_value();
      return true;
    case Lex::dead: return false;
    default: return structural(c);
  }
}

bool JsonPrefix::structural(uint8_t c) {
  if (is_space(c)) {
    if (++spaces_ > kMaxSpaces) return fail();
    return true;
  }
  spaces_ = 0;
  switch (lex_) {
    case Lex::value: return start_value(c);
    case Lex::value_or_close: return c == ']' ? close() : start_value(c);
    case Lex::key_or_close:
      if (c == '}') return close();
      [[fallthrough]];
    case Lex::key:
      if (c != '"') return fail();
      lex_ = Lex::string;
      key_ = true;
      return true;
    case Lex::colon:
      if (c != ':') return fail();
      lex_ = Lex::value;
      return true;
    case Lex::comma_or_close:
      if (c == ',') {
        lex_ = top_is_object() ? Lex::key : Lex::value;
        return true;
      }
      if (c == (top_is_object() ? '}' : ']')) return close();
      return fail();
    default: return fail();  // done: only whitespace may follow
  }
}

bool JsonPrefix::start_value(uint8_t c) {
  if (depth_ == 0 && top_ == JsonTop::object && c != '{') return fail();
  switch (c) {
    case '{': return open(true);
    case '[': return open(false);
    case '"':
      lex_ = Lex::string;
      key_ = false;
      return true;
    case '-': lex_ = Lex::minus; return true;
    case '0': lex_ = Lex::zero; return true;
    case 't': lex_ = Lex::literal; count_ = kTrue + 1; return true;
    case 'f': lex_ = Lex::literal; count_ = kFalse + 1; return true;
    case 'n': lex_ = Lex::literal; count_ = kNull + 1; return true;
    default:
      if (!is_digit(c)) return fail();
      lex_ = Lex::int_digits;
      return true;
  }
}

bool JsonPrefix::string_byte(uint8_t c) {
  if (c == '"') {
    if (!key_) return end_value();
    lex_ = Lex::colon;
    return true;
  }
  if (c == '\\') {
    lex_ = Lex::escape;
    return true;
  }
  if (c < 0x20) return fail();  // control characters must be escaped
  if (c < 0x80) return true;
  // The first byte of a multi-byte sequence; the ranges of the second byte exclude overlong
  // forms, UTF-16 surrogates and code points above U+10FFFF (RFC 3629, section 4).
  lo_ = 0x80;
  hi_ = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    count_ = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    count_ = 2;
    if (c == 0xE0) lo_ = 0xA0;
    if (c == 0xED) hi_ = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    count_ = 3;
    if (c == 0xF0) lo_ = 0x90;
    if (c == 0xF4) hi_ = 0x8F;
  } else {
    return fail();
  }
  lex_ = Lex::utf8;
  return true;
}

bool JsonPrefix::hex_digit(uint8_t c) {
  // The first two digits tell a surrogate: D800-DBFF high, DC00-DFFF low. A high one must be
  // followed by a low one in the next escape; a low one alone is refused.
  const int v = hex_value(c);
  if (v < 0) return fail();
  switch (surrogate_) {
    case Surrogate::none:
      if (count_ == 4 && v == 0xD) surrogate_ = Surrogate::first_d;
      break;
    case Surrogate::first_d:
      if (v >= 0xC) return fail();
      surrogate_ = v >= 0x8 ? Surrogate::high : Surrogate::none;
      break;
    case Surrogate::low_first:
      if (v != 0xD) return fail();
      surrogate_ = Surrogate::low_second;
      break;
    case Surrogate::low_second:
      if (v < 0xC) return fail();
      surrogate_ = Surrogate::none;
      break;
    case Surrogate::high: break;
  }
  if (--count_ == 0) lex_ = surrogate_ == Surrogate::high ? Lex::low_backslash : Lex::string;
  return true;
}

bool JsonPrefix::open(bool object) {
  if (depth_ == kMaxDepth) return fail();
  const uint64_t bit = uint64_t{1} << depth_;
  stack_ = object ? stack_ | bit : stack_ & ~bit;
  ++depth_;
  lex_ = object ? Lex::key_or_close : Lex::value_or_close;
  return true;
}

bool JsonPrefix::close() {
  --depth_;
  return end_value();
}

bool JsonPrefix::end_value() {
  lex_ = depth_ == 0 ? Lex::done : Lex::comma_or_close;
  return true;
}

bool JsonPrefix::fail() {
  lex_ = Lex::dead;
  return false;
}

bool JsonPrefix::complete() const {
  if (lex_ == Lex::done) return true;
  const bool number_end = lex_ == Lex::zero || lex_ == Lex::int_digits || lex_ == Lex::frac || lex_ == Lex::exp_digits;
  return depth_ == 0 && number_end;
}

}  // namespace sy::serving
