#include "util/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace sy {

size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                  std::tolower(static_cast<unsigned char>(b[j - 1]))
                              ? 0
                              : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  // A unique candidate that starts with the word ("flash" -> "flash_attention") wins outright.
  if (word.size() >= 3) {
    std::optional<std::string> only;
    int n = 0;
    for (const auto& c : candidates)
      if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
        only = c;
        ++n;
      }
    if (n == 1) return only;
  }
  std::optional<std::string> best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (!best) return std::nullopt;
  const size_t limit = std::max<size_t>(1, std::max(word.size(), best->size()) / 3);
  // A suggestion must keep part of the word: 'x' is not a typo of 't'.
  if (best_d <= limit && best_d < word.size()) return best;
  return std::nullopt;
}

}  // namespace sy
