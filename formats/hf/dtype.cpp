#include "dtype.hpp"

#include <array>

namespace sy::hf {
namespace {

struct Entry {
  Dtype d;
  const char* name;
  uint64_t size;
};

constexpr std::array<Entry, 15> kTable{{
    {Dtype::BOOL, "BOOL", 1}, {Dtype::U8, "U8", 1},   {Dtype::I8, "I8", 1},   {Dtype::F8_E4M3, "F8_E4M3", 1},
    {Dtype::F8_E5M2, "F8_E5M2", 1}, {Dtype::I16, "I16", 2}, {Dtype::U16, "U16", 2}, {Dtype::F16, "F16", 2},
    {Dtype::BF16, "BF16", 2}, {Dtype::I32, "I32", 4}, {Dtype::U32, "U32", 4}, {Dtype::F32, "F32", 4},
    {Dtype::I64, "I64", 8}, {Dtype::U64, "U64", 8}, {Dtype::F64, "F64", 8},
}};

}  // namespace

std::optional<Dtype> dtype_from_name(std::string_view name) noexcept {
  for (const auto& e : kTable)
    if (name == e.name) return e.d;
  return std::nullopt;
}

const char* dtype_name(Dtype d) noexcept { return kTable[static_cast<size_t>(d)].name; }

uint64_t dtype_size(Dtype d) noexcept { return kTable[static_cast<size_t>(d)].size; }

const char* known_dtypes() noexcept {
  return "BOOL, U8, I8, F8_E4M3, F8_E5M2, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64";
}

std::optional<StorageType> storage_of(Dtype d) noexcept {
  switch (d) {
    case Dtype::F32: return StorageType::F32;
    case Dtype::F16: return StorageType::F16;
    case Dtype::BF16: return StorageType::BF16;
    default: return std::nullopt;
  }
}

}  // namespace sy::hf
