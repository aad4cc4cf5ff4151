// Split models (NAME-00001-of-00003.gguf ...): the file-name convention, and the checks
// that parsed shards form one model. Pure functions over bytes already parsed, so the
// fuzz target can hold fuzzed shard headers to the same rules as files on disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "parse.hpp"

namespace sy::gguf {

/// The value of metadata key `key` in a parsed file; nullptr when absent.
const MetaValue* find_kv(const File& f, std::string_view key);

/// The integer value of `key` (any GGUF integer type); nullopt when absent or not an integer.
std::optional<int64_t> kv_int(const File& f, std::string_view key);

/// The parts of a split-model file name: prefix, this shard's number and the count.
struct SplitName {
  std::string prefix;  ///< path up to "-00001-of-00003.gguf"
  int number = 0;
  int count = 0;
  /// The file name of shard `n` (1-based).
  [[nodiscard]] std::filesystem::path shard(int n) const;
};

/// Recognises "PREFIX-NNNNN-of-MMMMM.gguf" (1 <= NNNNN <= MMMMM); nullopt for any other name.
std::optional<SplitName> parse_split_name(const std::filesystem::path& p);

/// One parsed shard and the name its messages use.
struct ShardRef {
  const File* file;
  std::string name;
};

/// Checks shards given in order (shard 1 first) against each other: every shard that states
/// 'split.no' or 'split.count' states its own position and the number of shards, no tensor
/// name appears in two shards, and the first shard's 'split.tensors.count' (when present)
/// equals the tensors of all shards together. Errors name the shard and the key.
Status check_split_set(std::span<const ShardRef> shards);

}  // namespace sy::gguf
