#include "server/parse/json_scan.hpp"

#include <cstddef>

namespace sy::server {

namespace {

constexpr std::size_t kMaxDepth = 512;

bool is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_hex(unsigned char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Number steps: which part of `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?` was read last.
enum NumberStep : uint8_t {
  minus,         // "-": a digit must follow
  zero,          // leading "0": no more integer digits
  int_digits,    // [1-9][0-9]*
  dot,           // ".": a digit must follow
  frac_digits,
  exp_mark,      // "e": sign or digit
  exp_sign,      // "e+": a digit must follow
  exp_digits,
};

bool number_can_end(uint8_t step) {
  return step == zero || step == int_digits || step == frac_digits || step == exp_digits;
}

}  // namespace

JsonScanner::State JsonScanner::feed(char ch) {
  if (state_ != State::more) return state_;
  const auto c = static_cast<unsigned char>(ch);
  switch (mode_) {
    case Mode::string:
      return in_string(c);
    case Mode::literal:
      if (c != static_cast<unsigned char>(literal_[literal_pos_])) return fail();
      if (literal_[++literal_pos_] == '\0') {
        mode_ = Mode::structure;
        return value_ended();
      }
      return state_;
    case Mode::number:
      if (number_continues(c)) return state_;
      if (!number_can_end(number_step_)) return fail();
      mode_ = Mode::structure;
      // A number has no closing byte: the byte after it belongs to the structure.
      if (value_ended() != State::more) return state_;
      return structural(c);
    case Mode::structure:
      break;
  }
  return structural(c);
}

bool JsonScanner::number_continues(unsigned char c) {
  switch (number_step_) {
    case minus:
      if (c == '0') number_step_ = zero;
      else if (is_digit(c)) number_step_ = int_digits;
      else return false;
      return true;
    case zero:
    case int_digits:
      if (number_step_ == int_digits && is_digit(c)) return true;
      if (c == '.') number_step_ = dot;
      else if (c == 'e' || c == 'E') number_step_ = exp_mark;
      else return false;
      return true;
    case dot:
    case frac_digits:
      if (is_digit(c)) number_step_ = frac_digits;
      else if (number_step_ == frac_digits && (c == 'e' || c == 'E')) number_step_ = exp_mark;
      else return false;
      return true;
    case exp_mark:
      if (c == '+' || c == '-') number_step_ = exp_sign;
      else if (is_digit(c)) number_step_ = exp_digits;
      else return false;
      return true;
    case exp_sign:
    case exp_digits:
      if (!is_digit(c)) return false;
      number_step_ = exp_digits;
      return true;
    default:
      return false;
  }
}

JsonScanner::State JsonScanner::in_string(unsigned char c) {
  if (escape_ == 1) {
    if (c == 'u') escape_ = 2;
    else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') escape_ = 0;
    else return fail();
    return state_;
  }
  if (escape_ >= 2) {
    if (!is_hex(c)) return fail();
    escape_ = escape_ == 5 ? 0 : static_cast<uint8_t>(escape_ + 1);
    return state_;
  }
  if (c < 0x20) return fail();
  if (c == '\\') {
    escape_ = 1;
    return state_;
  }
  if (c != '"') return state_;
  mode_ = Mode::structure;
  if (string_is_key_) {
    expect_ = Expect::colon;
    return state_;
  }
  return value_ended();
}

JsonScanner::State JsonScanner::start_value(unsigned char c) {
  if (c == '{' || c == '[') {
    if (in_object_.size() >= kMaxDepth) return fail();
    in_object_.push_back(c == '{');
    expect_ = c == '{' ? Expect::key_or_close : Expect::value_or_close;
    return state_;
  }
  if (c == '"') {
    mode_ = Mode::string;
    string_is_key_ = false;
    return state_;
  }
  if (expect_ == Expect::top) return fail();  // a number or literal has no closing byte
  if (c == '-' || is_digit(c)) {
    mode_ = Mode::number;
    number_step_ = c == '-' ? minus : c == '0' ? zero : int_digits;
    return state_;
  }
  if (c == 't' || c == 'f' || c == 'n') {
    mode_ = Mode::literal;
    literal_ = c == 't' ? "true" : c == 'f' ? "false" : "null";
    literal_pos_ = 1;
    return state_;
  }
  return fail();
}

JsonScanner::State JsonScanner::value_ended() {
  if (in_object_.empty()) return state_ = State::done;
  expect_ = Expect::comma_or_close;
  return state_;
}

JsonScanner::State JsonScanner::structural(unsigned char c) {
  if (is_ws(c)) return state_;
  switch (expect_) {
    case Expect::top:
    case Expect::value:
      return start_value(c);
    case Expect::value_or_close:
      if (c != ']') return start_value(c);
      in_object_.pop_back();
      return value_ended();
    case Expect::key_or_close:
      if (c == '}') {
        in_object_.pop_back();
        return value_ended();
      }
      [[fallthrough]];
    case Expect::key:
      if (c != '"') return fail();
      mode_ = Mode::string;
      string_is_key_ = true;
      return state_;
    case Expect::colon:
      if (c != ':') return fail();
      expect_ = Expect::value;
      return state_;
    case Expect::comma_or_close: {
      const bool object = in_object_.back();
      if (c == ',') {
        expect_ = object ? Expect::key : Expect::value;
        return state_;
      }
      if (c != (object ? '}' : ']')) return fail();
      in_object_.pop_back();
      return value_ended();
    }
  }
  return fail();
}

}  // namespace sy::server
