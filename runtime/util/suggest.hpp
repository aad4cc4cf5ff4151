// "Did you mean ...?" for unknown keys, plugin names and subcommands.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sy {

/// Optimal-string-alignment edit distance (insert, delete, substitute, swap neighbours).
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a plausible typo
/// (distance <= max(1, len/3), or one is a prefix of the other), else nullopt.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace sy
