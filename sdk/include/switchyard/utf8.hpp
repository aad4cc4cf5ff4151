// UTF-8 validity, and the one escaping every output uses for bytes that are not UTF-8.
// Model files carry strings from anywhere; names must be UTF-8 (the GGUF reader refuses
// others), values keep their bytes, and whatever prints a value escapes it with
// escape_invalid_utf8 so terminals, logs and JSON always get text. append_utf8 lives here,
// header-only, so that code without ICU (the template interpreter) can share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sy {

/// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when the bytes there are
/// not one. Strict, as Unicode's table of well-formed byte sequences (and Python's codec):
/// no overlong forms, no surrogates, nothing past U+10FFFF.
inline size_t utf8_sequence_length(std::string_view s, size_t i) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned c = p[i];
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
  else return 0;
  if (len > s.size() - i) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((p[i + k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i + k] & 0x3F);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/// Appends the UTF-8 encoding of code point `cp` (callers pass values up to U+10FFFF).
inline void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// Position of the first byte of `s` that starts no well-formed UTF-8 sequence; nullopt
/// when all of `s` is UTF-8.
inline std::optional<size_t> first_invalid_utf8(std::string_view s) noexcept {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

/// `s` with every byte that is not part of a well-formed UTF-8 sequence written as \xNN
/// (two lowercase hex digits): Python's bytes.decode("utf-8", "backslashreplace"). UTF-8
/// text, backslashes included, is returned unchanged.
inline std::string escape_invalid_utf8(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (const size_t n = utf8_sequence_length(s, i); n > 0) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    const auto b = static_cast<unsigned char>(s[i++]);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

}  // namespace sy
