// Streamed text is cut wherever the tokenizer cut it, which can be inside a UTF-8
// character; a client must never be sent half a character.
#pragma once

#include <string>
#include <string_view>

namespace sy::server {

/// Length of the longest prefix of `s` that does not end inside an unfinished UTF-8
/// sequence (bytes that are not UTF-8 at all are not held: they cannot be completed).
size_t utf8_complete_length(std::string_view s);

/// Holds back the unfinished character at the end of a stream of text pieces.
class Utf8Hold {
 public:
  /// Adds `piece`; returns the text up to the last complete character.
  std::string take(std::string_view piece);
  /// Returns whatever is still held (the stream ended).
  std::string flush();

 private:
  std::string pending_;
};

}  // namespace sy::server
