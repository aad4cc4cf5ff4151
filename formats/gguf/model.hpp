// An opened GGUF model: one file, or every shard of a split model
// (name-00001-of-00003.gguf ...), presented as one ModelSource with zero-copy views.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mapped_file.hpp"
#include "parse.hpp"
#include "split.hpp"
#include "switchyard/format.hpp"

namespace sy::gguf {

class Model final : public ModelSource {
 public:
  /// Opens a file, or all shards of the split model it belongs to.
  static Result<std::unique_ptr<Model>> open(const std::filesystem::path& path);

  const Metadata& metadata() const noexcept override { return metadata_; }
  std::span<const TensorDesc> tensors() const noexcept override { return descs_; }
  Result<std::span<const std::byte>> view(size_t index) const noexcept override;
  Status read(size_t index, uint64_t offset, std::span<std::byte> out) const noexcept override;

  /// Metadata of the first shard in file order (for writers and `inspect`).
  [[nodiscard]] const std::vector<std::pair<std::string, MetaValue>>& ordered_metadata() const {
    return shards_.front().file.kv;
  }
  /// The GGUF version, alignment and shard count.
  [[nodiscard]] uint32_t version() const { return shards_.front().file.version; }
  [[nodiscard]] uint32_t alignment() const { return shards_.front().file.alignment; }
  [[nodiscard]] size_t shard_count() const { return shards_.size(); }
  /// The file holding tensor i.
  [[nodiscard]] const std::filesystem::path& file_of(size_t index) const;

 private:
  struct Shard {
    std::unique_ptr<MappedFile> map;
    File file;
  };
  struct Where {
    size_t shard;
    uint64_t offset;  ///< absolute, in the shard's file
  };
  std::vector<Shard> shards_;
  Metadata metadata_;
  std::vector<TensorDesc> descs_;
  std::vector<Where> where_;
};

}  // namespace sy::gguf
