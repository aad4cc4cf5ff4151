#include "bench/rows.hpp"

#include <sstream>

#include "util/parse_number.hpp"

namespace sy::bench {

Result<std::vector<int64_t>> parse_int_list(const std::string& flag, const std::vector<std::string>& given, int64_t lo,
                                            int64_t hi) {
  std::vector<int64_t> out;
  for (const auto& text : given) {
    // "-p ''" or "-p 1,,2" would silently measure fewer rows than typed.
    if (text.empty() || text.back() == ',' || text.find(",,") != std::string::npos)
      return error::invalid_argument(flag + " '" + text + "': an empty item; give integers separated by single commas");
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const auto v = util::parse_integer<int64_t>(item, lo, hi);
      if (!v.ok())
        return error::invalid_argument(flag + " '" + item + "': expected integers from " + std::to_string(lo) + " to " +
                                       std::to_string(hi) + ", separated by commas (e.g. " + flag + " " +
                                       std::to_string(lo) + "," + std::to_string(lo + 1) + ")");
      out.push_back(v.value);
    }
  }
  return out;
}

std::vector<RowSpec> cross_rows(const std::vector<int64_t>& p, const std::vector<int64_t>& n,
                                const std::vector<int64_t>& t, const std::vector<int64_t>& d) {
  std::vector<RowSpec> rows;
  for (auto pp : p)
    for (auto nn : n)
      for (auto tt : t)
        for (auto dd : d)
          if (pp > 0 || nn > 0) rows.push_back({pp, nn, dd, static_cast<int>(tt)});
  return rows;
}

std::string test_name(const char* kind, int64_t tokens, int64_t depth) {
  std::string s = kind + std::to_string(tokens);
  if (depth != 0) s += " @ d" + std::to_string(depth);
  return s;
}

}  // namespace sy::bench
