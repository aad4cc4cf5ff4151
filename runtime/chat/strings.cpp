#include "chat/strings.hpp"

#include <cctype>

namespace sy::chat {

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string ascii_lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string ascii_upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string capitalize(std::string s) {
  s = ascii_lower(std::move(s));
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

std::string str_title(std::string s) {
  bool start = true;
  for (auto& c : s) {
    const auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
    start = !std::isalpha(u);
  }
  return s;
}

std::string jinja_title(std::string s) {
  // "".join(item[0].upper() + item[1:].lower() for item in re.split(r"([-\s({\[<]+)", s))
  bool start = true;
  for (auto& c : s) {
    const auto u = static_cast<unsigned char>(c);
    const bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || is_space(c) || (u >= 0x1c && u <= 0x1f);
    c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
    start = sep;
  }
  return s;
}

std::string strip(const std::string& s, const std::string* chars, bool left, bool right) {
  auto strip_it = [&](char c) { return chars ? chars->find(c) != std::string::npos : is_space(c); };
  size_t b = 0, e = s.size();
  if (left)
    while (b < e && strip_it(s[b])) ++b;
  if (right)
    while (e > b && strip_it(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  std::string out;
  int64_t done = 0;
  if (from.empty()) {
    size_t i = 0;
    for (;;) {
      if (count < 0 || done < count) out += to, ++done;
      if (i >= s.size()) break;
      size_t n = 1;
      while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
      out.append(s, i, n);
      i += n;
    }
    return out;
  }
  size_t i = 0;
  for (size_t at; (count < 0 || done < count) && (at = s.find(from, i)) != std::string::npos; i = at + from.size(), ++done)
    out.append(s, i, at - i).append(to);
  return out.append(s, i, std::string::npos);
}

std::vector<std::string> splitlines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t end = 0;  // length of a line break here
    if (c == '\r') end = i + 1 < s.size() && s[i + 1] == '\n' ? 2 : 1;
    else if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) end = 1;
    else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) end = 2;
    else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
             (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9))
      end = 3;
    if (end) {
      lines.push_back(std::move(cur));
      cur.clear();
      i += end;
    } else {
      cur += s[i++];
    }
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  return lines;
}

bool is_lower(const std::string& s) {
  bool cased = false;
  for (unsigned char c : s) {
    if (std::isupper(c)) return false;
    cased = cased || std::islower(c);
  }
  return cased;
}

bool is_upper(const std::string& s) {
  bool cased = false;
  for (unsigned char c : s) {
    if (std::islower(c)) return false;
    cased = cased || std::isupper(c);
  }
  return cased;
}

}  // namespace sy::chat
