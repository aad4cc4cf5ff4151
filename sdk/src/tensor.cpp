#include "switchyard/tensor.hpp"

namespace sy {

uint64_t TensorDesc::elements() const noexcept {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::optional<uint64_t> tensor_bytes(StorageType type, const std::vector<int64_t>& shape) noexcept {
  if (shape.empty()) return storage_row_bytes(type, 1);
  for (int64_t d : shape)
    if (d < 0) return std::nullopt;
  auto row = storage_row_bytes(type, static_cast<uint64_t>(shape[0]));
  if (!row) return std::nullopt;
  uint64_t total = *row;
  for (size_t i = 1; i < shape.size(); ++i) {
    const auto d = static_cast<uint64_t>(shape[i]);
    if (d != 0 && total > UINT64_MAX / d) return std::nullopt;
    total *= d;
  }
  return total;
}

}  // namespace sy
