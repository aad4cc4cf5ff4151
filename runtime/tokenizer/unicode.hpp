// UTF-8 helpers, GPT-2's byte-level alphabet, and NFC normalisation (through ICU, the
// Unicode data every Hugging Face NFC normaliser is defined by).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "switchyard/utf8.hpp"

namespace sy::tok {

/// Length in bytes of the UTF-8 sequence starting with byte `c` (1 for invalid bytes).
inline size_t utf8_len(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}
using sy::append_utf8;  // in switchyard/utf8.hpp
/// How many bytes at the end of `s` form an incomplete UTF-8 sequence (0 when complete).
size_t incomplete_utf8_tail(std::string_view s);

/// GPT-2's reversible map from bytes to printable code points, as UTF-8 strings.
const std::array<std::string, 256>& byte_to_unicode();
/// The inverse: a byte for a code point of that alphabet, or -1.
int unicode_to_byte(uint32_t cp);

/// The byte a SentencePiece byte token names ("<0x0A>" -> 0x0A): exactly "<0x", two hex
/// digits and ">"; nullopt for any other text.
std::optional<uint8_t> byte_token_value(std::string_view token);

/// Unicode Normalization Form C of UTF-8 text (invalid UTF-8 is left unchanged).
std::string nfc(std::string_view text);

}  // namespace sy::tok
