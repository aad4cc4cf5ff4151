// A model opened to be written again as GGUF (quantize, convert, split, merge): a GGUF file
// (or split set) with its metadata in file order, or any folder a format plugin opens (a
// Hugging Face checkpoint, quantized or not), whose tokenizer.json becomes GGUF tokenizer keys.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/source.hpp"
#include "registry/registry.hpp"
#include "switchyard/format.hpp"

namespace sy::gguf {
class Model;
}

namespace sy::gguf_tools {

using MetaEntries = std::vector<std::pair<std::string, MetaValue>>;

class Input {
 public:
  /// Opens `path`: a .gguf file directly, anything else through the format plugins.
  static Result<std::unique_ptr<Input>> open(const std::filesystem::path& path);
  ~Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  [[nodiscard]] const ModelSource& source() const { return *source_; }
  /// The metadata to write, in order: a GGUF's own order; for a folder, general.* first,
  /// then the hyper-parameters, then the tokenizer (none of the reader's general.source.* notes).
  [[nodiscard]] const MetaEntries& metadata() const { return metadata_; }
  /// "gguf", "hf", "awq", ...: the format that opened it.
  [[nodiscard]] const std::string& format() const { return format_; }
  /// True for a GGUF input (its tensors are already named and laid out as GGUF wants).
  [[nodiscard]] bool is_gguf() const { return gguf_ != nullptr; }
  /// The GGUF input itself (shards, alignment); nullptr for a folder.
  [[nodiscard]] const gguf::Model* gguf() const { return gguf_; }
  /// Things a user should know about the input (no tokenizer.json, dropped tensors...).
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

  /// A tensor's bytes: a view when the source has them in place, else read into `scratch`.
  Result<std::span<const std::byte>> bytes(size_t index, std::vector<std::byte>& scratch) const;

 private:
  Input() = default;
  Status add_folder_tokenizer(const std::filesystem::path& dir);

  std::unique_ptr<registry::Registry> registry_;  // first: destroyed after the source it loaded
  std::optional<model::OpenedSource> opened_;
  std::unique_ptr<gguf::Model> owned_gguf_;
  const gguf::Model* gguf_ = nullptr;
  const ModelSource* source_ = nullptr;
  std::string format_;
  MetaEntries metadata_;
  std::vector<std::string> notes_;
};

}  // namespace sy::gguf_tools
