// Python's str methods on UTF-8 text, as the filters and string methods need them. Case
// mapping is ASCII-only; code points are counted and split as UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sy::chat {

size_t code_points(const std::string& s);
bool is_space(char c);
std::string ascii_lower(std::string s);
std::string ascii_upper(std::string s);
/// str.capitalize(): the first character upper case, the rest lower case.
std::string capitalize(std::string s);
/// str.title(): upper case after every character that is not a letter.
std::string str_title(std::string s);
/// Jinja's title filter: upper case at the start and after - ( { [ < and whitespace.
std::string jinja_title(std::string s);
/// str.strip(chars) (whitespace when `chars` is null) on the chosen sides.
std::string strip(const std::string& s, const std::string* chars, bool left, bool right);
/// str.replace(old, new, count); an empty `from` inserts `to` around every code point.
std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count);
/// str.splitlines(): \n, \r\n, \r, \v, \f, \x1c-\x1e, U+0085, U+2028, U+2029 end lines.
std::vector<std::string> splitlines(const std::string& s);
/// str.islower() / str.isupper(): some cased character, and all of them in that case.
bool is_lower(const std::string& s);
bool is_upper(const std::string& s);

}  // namespace sy::chat
