// Weight formats: readers that turn files on disk into canonical tensors and metadata.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "switchyard/component.hpp"
#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"
#include "switchyard/tensor.hpp"

namespace sy {

/// An opened model: metadata plus tensors with canonical names.
class ModelSource {
 public:
  virtual ~ModelSource() = default;
  /// Typed metadata: architecture, hyper-parameters, tokenizer, chat template.
  [[nodiscard]] virtual const Metadata& metadata() const noexcept = 0;
  /// Every tensor, in the file's order.
  [[nodiscard]] virtual std::span<const TensorDesc> tensors() const noexcept = 0;
  /// Zero-copy view of a tensor's bytes (valid while the source lives), or an error when
  /// the format cannot map it (then use read()).
  [[nodiscard]] virtual Result<std::span<const std::byte>> view(size_t index) const noexcept = 0;
  /// Copies `out.size()` bytes of a tensor, starting at byte `offset` of that tensor.
  [[nodiscard]] virtual Status read(size_t index, uint64_t offset, std::span<std::byte> out) const noexcept = 0;

 protected:
  ModelSource() = default;
};

/// A weight-format component (gguf, awq, gptq, fp8, ...).
class WeightFormat : public Component {
 public:
  [[nodiscard]] ComponentKind kind() const noexcept final { return ComponentKind::format; }
  /// How well this format can read `path`: 0 = not at all, up to 100 = certain (magic bytes).
  /// Must be cheap: read a few bytes or a file name, never the whole file.
  [[nodiscard]] virtual int probe(const std::filesystem::path& path) const noexcept = 0;
  /// Opens the model at `path` (a file, a shard of a split file, or a directory).
  [[nodiscard]] virtual Result<std::unique_ptr<ModelSource>> open(const std::filesystem::path& path) const noexcept = 0;
};

}  // namespace sy
