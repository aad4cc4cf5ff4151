#include "server/parse/utf8_hold.hpp"

namespace sy::server {

namespace {

// Bytes a sequence takes, from its lead byte; 0 for a byte that cannot start one.
size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

}  // namespace

size_t utf8_complete_length(std::string_view s) {
  // A sequence is at most 4 bytes, so only the last 3 can belong to an unfinished one.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<unsigned char>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = sequence_length(b);
    return need > back ? n - back : n;
  }
  return n;
}

std::string Utf8Hold::take(std::string_view piece) {
  pending_ += piece;
  const size_t n = utf8_complete_length(pending_);
  std::string out = pending_.substr(0, n);
  pending_.erase(0, n);
  return out;
}

std::string Utf8Hold::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace sy::server
