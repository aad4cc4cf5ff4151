#include "quoted.hpp"

#include <algorithm>
#include <string_view>

#include "switchyard/utf8.hpp"

namespace sy::gguf {

std::string quoted_text(const std::string& s, size_t max_bytes) {
  size_t n = std::min(s.size(), max_bytes);
  for (int back = 0; back < 3 && n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++back) --n;
  std::string out = "'";
  for (unsigned char c : escape_invalid_utf8(std::string_view(s).substr(0, n))) {
    if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + (n < s.size() ? "...'" : "'");
}

}  // namespace sy::gguf
