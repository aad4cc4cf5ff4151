// "Did you mean ...?" for unknown keys, plugin names and subcommands.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sy {

/// Optimal-string-alignment edit distance (insert, delete, substitute, swap neighbours).
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is a plausible typo (edit distance at most a
/// third of the length, at least 1, and less than the word's length), or the only
/// candidate that starts with `word` (3+ characters); else nullopt.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace sy
