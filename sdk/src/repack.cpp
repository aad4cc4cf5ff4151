// Interleaved weight layouts: rows grouped so a SIMD kernel reads several rows with one
// load. The bytes are the same as the row-major type's, only their order changes, so a
// repacked tensor costs no extra memory and planning sees the same sizes.
#include <cstring>
#include <string>

#include "switchyard/quant.hpp"

namespace sy {
namespace {

constexpr int kGroup = 16;

// One interleaved layout: its row-major base and where each piece of a row's block goes in
// a column of 16 blocks (quant.hpp's repack_rows() describes them).
struct Layout {
  StorageType type, base;
  size_t halves;     // f16 fields per block (d; Q4_K: d and dmin; I4_G*: d and z), each a 32-byte array first in the column
  size_t words;      // the block's other bytes as 4-byte words, each a 64-byte array of the 16 rows' words
  size_t halves_at;  // where the f16 fields are in a block (Q6_K keeps its d last)
  size_t words_at;   // where the words start in a block
};

constexpr Layout kLayouts[] = {
    {StorageType::Q4_K_X16, StorageType::Q4_K, 2, 35, 0, 4},  // 3 scale words, 32 quant words
    {StorageType::Q4_0_X16, StorageType::Q4_0, 1, 4, 0, 2},
    {StorageType::Q8_0_X16, StorageType::Q8_0, 1, 8, 0, 2},
    {StorageType::I4_G32_X16, StorageType::I4_G32, 2, 4, 0, 4},  // d, z; 16 code bytes
    {StorageType::I4_G64_X16, StorageType::I4_G64, 2, 8, 0, 4},
    {StorageType::I4_G128_X16, StorageType::I4_G128, 2, 16, 0, 4},
    {StorageType::Q6_K_X16, StorageType::Q6_K, 1, 52, 208, 0},  // 32 ql words, 16 qh words, 4 scale words; d
};

const Layout* layout_of(StorageType type) {
  for (const auto& l : kLayouts)
    if (l.type == type) return &l;
  return nullptr;
}

template <bool to_column>
Status convert(StorageType x, const void* src, void* dst, int64_t n, int64_t rows) {
  const Layout* l = layout_of(x);
  if (!l) return error::invalid_argument(std::string(storage_type_name(x)) + " is not an interleaved layout");
  const auto& info = storage_type_info(l->base);
  const auto bs = static_cast<int64_t>(info.block_size);
  if (n <= 0 || n % bs != 0 || rows < 0 || rows % kGroup != 0)
    return error::invalid_argument(std::string(storage_type_name(x)) + " needs rows of whole blocks (" +
                                   std::to_string(bs) + " elements) in groups of 16 rows");
  const size_t block = info.block_bytes, column = kGroup * block;
  const auto blocks = static_cast<size_t>(n / bs);
  const size_t row = blocks * block;
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  const size_t words_at = 32 * l->halves;
  for (int64_t g = 0; g < rows / kGroup; ++g)
    for (size_t s = 0; s < blocks; ++s)
      for (size_t r = 0; r < kGroup; ++r) {
        const size_t flat = (static_cast<size_t>(g) * kGroup + r) * row + s * block;
        const size_t col = static_cast<size_t>(g) * kGroup * row + s * column;
        const auto piece = [&](size_t b, size_t c, size_t len) {
          if constexpr (to_column)
            std::memcpy(out + col + c, in + flat + b, len);
          else
            std::memcpy(out + flat + b, in + col + c, len);
        };
        for (size_t h = 0; h < l->halves; ++h) piece(l->halves_at + 2 * h, 32 * h + 2 * r, 2);
        for (size_t w = 0; w < l->words; ++w) piece(l->words_at + 4 * w, words_at + 64 * w + 4 * r, 4);
      }
  return Status::ok();
}

}  // namespace

int interleave_rows(StorageType type) noexcept { return layout_of(type) ? kGroup : 1; }

StorageType interleave_base(StorageType type) noexcept {
  const Layout* l = layout_of(type);
  return l ? l->base : type;
}

StorageType interleaved_of(StorageType base) noexcept {
  for (const auto& l : kLayouts)
    if (l.base == base) return l.type;
  return base;
}

Status repack_rows(StorageType to, const void* src, void* dst, int64_t n, int64_t rows) noexcept {
  return convert<true>(to, src, dst, n, rows);
}

Status unpack_rows(StorageType from, const void* src, void* dst, int64_t n, int64_t rows) noexcept {
  return convert<false>(from, src, dst, n, rows);
}

}  // namespace sy
