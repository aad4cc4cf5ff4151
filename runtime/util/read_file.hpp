// The one way a command reads a file the user named: a directory, a missing file, an
// unreadable one or a read error becomes a sentence naming the flag and the path, never
// an exception (libstdc++ throws from inside a stream read on EISDIR).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "switchyard/status.hpp"

namespace sy::util {

/// The whole file. `what` names where the path came from, for the message:
/// "--prompt-file", "pipeline file", "the topology file". Refuses files larger than
/// `max_bytes` (what the caller can reasonably hold) with the size and the limit.
Result<std::string> read_file(const std::filesystem::path& path, std::string_view what,
                              uint64_t max_bytes = uint64_t{1} << 30);

/// As read_file(), but a file that does not exist is nullopt rather than an error: for
/// optional files found beside another (tokenizer_config.json beside tokenizer.json).
/// A directory or an unreadable file in its place is still an error, not "absent".
Result<std::optional<std::string>> read_optional_file(const std::filesystem::path& path, std::string_view what,
                                                      uint64_t max_bytes = uint64_t{1} << 30);

/// Checks that `path` is a readable file (not a directory) without reading it, for paths
/// that a library opens itself later; the same sentences as read_file().
Status check_input_file(const std::filesystem::path& path, std::string_view what);

/// Checks that `path` can be created or replaced as a regular file: not a directory, and
/// its parent directory exists. The check a command makes before it does any work, so a
/// mistyped output path fails at once with a sentence.
Status check_output_path(const std::filesystem::path& path, std::string_view what);

}  // namespace sy::util
