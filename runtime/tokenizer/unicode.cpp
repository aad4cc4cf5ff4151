#include "tokenizer/unicode.hpp"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <charconv>
#include <unordered_map>

namespace sy::tok {

size_t incomplete_utf8_tail(std::string_view s) {
  // Look back at most 3 bytes for the lead byte of the last sequence.
  for (size_t back = 1; back <= 4 && back <= s.size(); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte
    const size_t need = utf8_len(c);
    return need > back ? back : 0;
  }
  return 0;
}

namespace {

// Bytes that print as themselves keep their code point; the others are moved to 256+.
std::array<uint32_t, 256> byte_code_points() {
  std::array<uint32_t, 256> cps{};
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    cps[b] = printable ? b : next++;
  }
  return cps;
}

}  // namespace

const std::array<std::string, 256>& byte_to_unicode() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    const auto cps = byte_code_points();
    for (size_t b = 0; b < 256; ++b) append_utf8(t[b], cps[b]);
    return t;
  }();
  return table;
}

int unicode_to_byte(uint32_t cp) {
  static const std::unordered_map<uint32_t, int> inverse = [] {
    std::unordered_map<uint32_t, int> m;
    const auto cps = byte_code_points();
    for (int b = 0; b < 256; ++b) m[cps[static_cast<size_t>(b)]] = b;
    return m;
  }();
  const auto it = inverse.find(cp);
  return it == inverse.end() ? -1 : it->second;
}

std::optional<uint8_t> byte_token_value(std::string_view token) {
  if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>') return std::nullopt;
  unsigned v = 0;
  const char* digits = token.data() + 3;
  const auto [end, ec] = std::from_chars(digits, digits + 2, v, 16);
  if (ec != std::errc() || end != digits + 2) return std::nullopt;
  return static_cast<uint8_t>(v);
}

std::string nfc(std::string_view text) {
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* n = icu::Normalizer2::getNFCInstance(err);
  if (U_FAILURE(err) || !n) return std::string(text);
  const auto src = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  if (n->isNormalized(src, err) && U_SUCCESS(err)) return std::string(text);
  err = U_ZERO_ERROR;
  const icu::UnicodeString out = n->normalize(src, err);
  if (U_FAILURE(err)) return std::string(text);
  std::string s;
  out.toUTF8String(s);
  return s;
}

}  // namespace sy::tok
