// Finding where a streamed JSON object or array ends, byte by byte, and refusing text that
// cannot be JSON at the first byte that proves it (so that prose which merely starts with
// a brace is released as content without waiting for the end of the output).
#pragma once

#include <cstdint>
#include <vector>

namespace sy::server {

/// Checks a JSON object, array or string (RFC 8259 grammar, leading whitespace allowed) one
/// byte at a time; other values have no closing byte and are refused at the top level.
/// Strings are checked for escapes and control characters but not for valid UTF-8.
class JsonScanner {
 public:
  enum class State : uint8_t {
    more,     ///< a prefix of some JSON object or array
    done,     ///< the byte just fed closed the outermost object, array or string
    invalid,  ///< no continuation can make this JSON
  };

  /// Feeds the next byte; once done or invalid, further bytes change nothing.
  State feed(char c);
  /// Where the scan stands.
  [[nodiscard]] State state() const { return state_; }

 private:
  enum class Expect : uint8_t { top, value, value_or_close, key, key_or_close, colon, comma_or_close };
  enum class Mode : uint8_t { structure, string, number, literal };

  State structural(unsigned char c);
  State in_string(unsigned char c);
  bool number_continues(unsigned char c);
  State start_value(unsigned char c);
  State value_ended();
  State fail() { return state_ = State::invalid; }

  State state_ = State::more;
  Expect expect_ = Expect::top;
  Mode mode_ = Mode::structure;
  std::vector<bool> in_object_;  // the open containers, innermost last
  bool string_is_key_ = false;
  uint8_t escape_ = 0;        // 1 after a backslash, 2..5 while reading \uXXXX digits
  uint8_t number_step_ = 0;   // see number_continues()
  const char* literal_ = nullptr;
  uint8_t literal_pos_ = 0;
};

}  // namespace sy::server
