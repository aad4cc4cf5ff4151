// Interleaved weight layouts: rows grouped so a SIMD kernel reads several rows with one
// load. The bytes are the same as the row-major type's, only their order changes, so a
// repacked tensor costs no extra memory and planning sees the same sizes.
#include <cstring>
#include <string>

#include "switchyard/quant.hpp"

namespace sy {
namespace {

constexpr int kGroup = 16;
constexpr size_t kQ4K = 144;                  // bytes per Q4_K super-block
constexpr size_t kColumn = kGroup * kQ4K;     // one super-block column of a group

// Byte offsets inside a column of Q4_K_X16 (see repack_rows()).
constexpr size_t kD = 0, kDmin = 32, kScales = 64, kQs = 256;

// Where row r's super-block pieces go in a column: f(offset in the block, offset in the
// column, bytes).
template <class F>
void for_pieces(int r, F&& f) {
  f(0, kD + 2 * r, 2);
  f(2, kDmin + 2 * r, 2);
  for (size_t w = 0; w < 3; ++w) f(4 + 4 * w, kScales + 64 * w + 4 * r, 4);
  for (size_t chunk = 0; chunk < 32; ++chunk) f(16 + 4 * chunk, kQs + 64 * chunk + 4 * r, 4);
}

template <bool to_column>
Status convert(StorageType x, const void* src, void* dst, int64_t n, int64_t rows) {
  if (x != StorageType::Q4_K_X16)
    return error::invalid_argument(std::string(storage_type_name(x)) + " is not an interleaved layout");
  if (n <= 0 || n % 256 != 0 || rows < 0 || rows % kGroup != 0)
    return error::invalid_argument("Q4_K_X16 needs rows of whole super-blocks (256 elements) in groups of 16 rows");
  const auto blocks = static_cast<size_t>(n / 256);
  const size_t row = blocks * kQ4K;
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t g = 0; g < rows / kGroup; ++g)
    for (size_t s = 0; s < blocks; ++s)
      for (int r = 0; r < kGroup; ++r) {
        const size_t flat = static_cast<size_t>(g * kGroup + r) * row + s * kQ4K;
        const size_t col = static_cast<size_t>(g) * kGroup * row + s * kColumn;
        for_pieces(r, [&](size_t b, size_t c, size_t len) {
          if constexpr (to_column)
            std::memcpy(out + col + c, in + flat + b, len);
          else
            std::memcpy(out + flat + b, in + col + c, len);
        });
      }
  return Status::ok();
}

}  // namespace

int interleave_rows(StorageType type) noexcept { return type == StorageType::Q4_K_X16 ? kGroup : 1; }

StorageType interleave_base(StorageType type) noexcept {
  return type == StorageType::Q4_K_X16 ? StorageType::Q4_K : type;
}

Status repack_rows(StorageType to, const void* src, void* dst, int64_t n, int64_t rows) noexcept {
  return convert<true>(to, src, dst, n, rows);
}

Status unpack_rows(StorageType from, const void* src, void* dst, int64_t n, int64_t rows) noexcept {
  return convert<false>(from, src, dst, n, rows);
}

}  // namespace sy
