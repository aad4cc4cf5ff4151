// Tensor descriptors: what a weight format tells the runtime about each tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/storage.hpp"

namespace sy {

/// Maximum number of dimensions of a tensor, as in GGUF.
inline constexpr int kMaxDims = 4;

/// One tensor of a model, independent of where its bytes are.
struct TensorDesc {
  /// Canonical (GGUF-style) name, e.g. "blk.3.ffn_down_exps.weight".
  std::string name;
  /// Logical shape, innermost dimension first (GGUF order): a [rows x cols] matrix
  /// stored row-major has shape {cols, rows}.
  std::vector<int64_t> shape;
  /// Element layout.
  StorageType type = StorageType::F32;
  /// Size of the stored data in bytes.
  uint64_t bytes = 0;

  /// Number of elements (product of the shape; 1 for a scalar).
  [[nodiscard]] uint64_t elements() const noexcept;
};

/// Bytes a tensor of this shape and type occupies, or nullopt when the innermost
/// dimension is not a multiple of the type's block size, a dimension is negative,
/// or the size overflows 64 bits.
std::optional<uint64_t> tensor_bytes(StorageType type, const std::vector<int64_t>& shape) noexcept;

}  // namespace sy
