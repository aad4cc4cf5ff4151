// The safetensors files of a model folder: `model.safetensors`, or the shards that
// `model.safetensors.index.json` lists in its weight_map. Every tensor the index names must
// be in the shard it names; a missing shard or tensor is an error naming both.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "safetensors.hpp"

namespace sy::hf {

inline constexpr const char* kIndexFile = "model.safetensors.index.json";
inline constexpr const char* kSingleFile = "model.safetensors";

struct Checkpoint {
  std::filesystem::path dir;
  std::vector<std::unique_ptr<SafetensorsFile>> shards;  ///< in file-name order
  struct Entry {
    uint32_t shard = 0;
    const StTensor* tensor = nullptr;
  };
  std::vector<Entry> tensors;  ///< per shard, in data order
};

/// Opens the checkpoint of a folder, or of the folder holding a .safetensors file (the index
/// beside it when it lists that file, else that file alone).
Result<Checkpoint> open_checkpoint(const std::filesystem::path& path);

/// Drops the shards' pages from this process's memory (they stay in the page cache, and a
/// later read faults them back): after a quantized checkpoint is decoded, its source bytes
/// are no longer needed.
void release_pages(const Checkpoint& c) noexcept;

/// A small JSON file read whole (at most `max_bytes`), as text; errors name the file.
Result<std::string> read_text_file(const std::filesystem::path& path, uint64_t max_bytes);

}  // namespace sy::hf
