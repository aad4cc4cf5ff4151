#include "server/parse/tool_call_id.hpp"

namespace sy::server {

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string tool_call_id(ToolFormat format, std::string_view prefix, size_t n) {
  std::string id(prefix);
  id += std::to_string(n);
  if (format != ToolFormat::mistral) return id;
  static constexpr std::string_view kDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  uint64_t h = fnv1a64(id);
  std::string out(9, '0');
  for (size_t i = 9; i-- > 0;) {  // most significant digit first
    out[i] = kDigits[h % 62];
    h /= 62;
  }
  return out;
}

}  // namespace sy::server
