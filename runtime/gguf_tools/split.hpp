// `switchyard gguf split` / `merge`: llama.cpp's gguf-split file sets. The first shard holds
// every metadata key and split.no / split.count / split.tensors.count; the others hold only
// split.no and split.count, and their tensors. Shards are named PREFIX-00001-of-00003.gguf.
// Each shard is written atomically (gguf::Writer); a set cut short lacks its last shards,
// which the GGUF reader refuses by name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf_tools/rewrite.hpp"

namespace sy::gguf_tools {

struct SplitOptions {
  int64_t max_tensors = 128;  ///< tensors per shard (gguf-split's default)
  uint64_t max_bytes = 0;     ///< > 0: tensor bytes per shard instead (a larger tensor gets a shard of its own)
  bool no_tensor_first_split = false;  ///< the first shard holds the metadata only
};

/// The tensor indices of each shard, in order.
std::vector<std::vector<size_t>> plan_split(std::span<const TensorDesc> tensors, const SplitOptions& o);

/// "512M", "2G", "100K", or a plain byte count; gguf-split's --split-max-size.
Result<uint64_t> parse_size(std::string_view s);

/// Splits `input` (one GGUF, or a split set) into shards named after `prefix`; returns them.
/// `dry_run`: the names only, nothing written.
Result<std::vector<std::filesystem::path>> split_model(const std::filesystem::path& input, const std::filesystem::path& prefix,
                                                        const SplitOptions& o, bool dry_run, const Progress& progress = {});

/// Merges the split set `first_shard` belongs to into `output`.
Status merge_model(const std::filesystem::path& first_shard, const std::filesystem::path& output,
                   const Progress& progress = {});

}  // namespace sy::gguf_tools
