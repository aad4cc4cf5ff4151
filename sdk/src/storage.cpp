#include "switchyard/storage.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace sy {
namespace {

using T = StorageType;

// Block layouts of the GGUF types follow ggml's block_* structs (ggml-common.h);
// the comment after each entry spells out where the byte count comes from.
constexpr std::array kTable{
    StorageTypeInfo{T::F32, "F32", 1, 4, false, true, 0},
    StorageTypeInfo{T::F16, "F16", 1, 2, false, true, 0},
    StorageTypeInfo{T::Q4_0, "Q4_0", 32, 18, true, true, 0},      // f16 d + 16 nibble bytes
    StorageTypeInfo{T::Q4_1, "Q4_1", 32, 20, true, true, 0},      // f16 d, m + 16
    StorageTypeInfo{T::Q5_0, "Q5_0", 32, 22, true, true, 0},      // f16 d + 4 high bits + 16
    StorageTypeInfo{T::Q5_1, "Q5_1", 32, 24, true, true, 0},      // f16 d, m + 4 + 16
    StorageTypeInfo{T::Q8_0, "Q8_0", 32, 34, true, true, 0},      // f16 d + 32
    StorageTypeInfo{T::Q8_1, "Q8_1", 32, 36, true, true, 0},      // f16 d, s + 32
    StorageTypeInfo{T::Q2_K, "Q2_K", 256, 84, true, true, 0},     // 16 scales + 64 + f16 d, dmin
    StorageTypeInfo{T::Q3_K, "Q3_K", 256, 110, true, true, 0},    // 32 hmask + 64 + 12 scales + d
    StorageTypeInfo{T::Q4_K, "Q4_K", 256, 144, true, true, 0},    // d, dmin + 12 scales + 128
    StorageTypeInfo{T::Q5_K, "Q5_K", 256, 176, true, true, 0},    // d, dmin + 12 + 32 qh + 128
    StorageTypeInfo{T::Q6_K, "Q6_K", 256, 210, true, true, 0},    // 128 ql + 64 qh + 16 scales + d
    StorageTypeInfo{T::Q8_K, "Q8_K", 256, 292, true, true, 0},    // f32 d + 256 + 16 i16 bsums
    StorageTypeInfo{T::IQ2_XXS, "IQ2_XXS", 256, 66, true, true, 0},
    StorageTypeInfo{T::IQ2_XS, "IQ2_XS", 256, 74, true, true, 0},
    StorageTypeInfo{T::IQ3_XXS, "IQ3_XXS", 256, 98, true, true, 0},
    StorageTypeInfo{T::IQ1_S, "IQ1_S", 256, 50, true, true, 0},
    StorageTypeInfo{T::IQ4_NL, "IQ4_NL", 32, 18, true, true, 0},
    StorageTypeInfo{T::IQ3_S, "IQ3_S", 256, 110, true, true, 0},
    StorageTypeInfo{T::IQ2_S, "IQ2_S", 256, 82, true, true, 0},
    StorageTypeInfo{T::IQ4_XS, "IQ4_XS", 256, 136, true, true, 0},
    StorageTypeInfo{T::I8, "I8", 1, 1, false, true, 0},
    StorageTypeInfo{T::I16, "I16", 1, 2, false, true, 0},
    StorageTypeInfo{T::I32, "I32", 1, 4, false, true, 0},
    StorageTypeInfo{T::I64, "I64", 1, 8, false, true, 0},
    StorageTypeInfo{T::F64, "F64", 1, 8, false, true, 0},
    StorageTypeInfo{T::IQ1_M, "IQ1_M", 256, 56, true, true, 0},
    StorageTypeInfo{T::BF16, "BF16", 1, 2, false, true, 0},
    StorageTypeInfo{T::TQ1_0, "TQ1_0", 256, 54, true, true, 0},
    StorageTypeInfo{T::TQ2_0, "TQ2_0", 256, 66, true, true, 0},
    StorageTypeInfo{T::MXFP4, "MXFP4", 32, 17, true, true, 0},    // e8m0 scale + 16
    StorageTypeInfo{T::FP8_E4M3, "FP8_E4M3", 1, 1, false, false, 0},
    StorageTypeInfo{T::FP8_E5M2, "FP8_E5M2", 1, 1, false, false, 0},
    StorageTypeInfo{T::FP8_E4M3_B128, "FP8_E4M3_B128", 128, 132, true, false, 0},
    StorageTypeInfo{T::FP8_E5M2_B128, "FP8_E5M2_B128", 128, 132, true, false, 0},
    StorageTypeInfo{T::I4_G32, "I4_G32", 32, 20, true, false, 32},     // f16 d, z + 16
    StorageTypeInfo{T::I4_G64, "I4_G64", 64, 36, true, false, 64},     // f16 d, z + 32
    StorageTypeInfo{T::I4_G128, "I4_G128", 128, 68, true, false, 128}, // f16 d, z + 64
    StorageTypeInfo{T::I8_G32, "I8_G32", 32, 36, true, false, 32},
    StorageTypeInfo{T::I8_G64, "I8_G64", 64, 68, true, false, 64},
    StorageTypeInfo{T::I8_G128, "I8_G128", 128, 132, true, false, 128},
    StorageTypeInfo{T::Q4_K_X16, "Q4_K_X16", 256, 144, true, false, 0},  // 16 rows interleaved
    StorageTypeInfo{T::Q4_0_X16, "Q4_0_X16", 32, 18, true, false, 0},
    StorageTypeInfo{T::Q8_0_X16, "Q8_0_X16", 32, 34, true, false, 0},
};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::span<const StorageTypeInfo> storage_types() noexcept { return kTable; }

const StorageTypeInfo* storage_type_info(uint32_t id) noexcept {
  for (const auto& t : kTable)
    if (static_cast<uint32_t>(t.type) == id) return &t;
  return nullptr;
}

const StorageTypeInfo& storage_type_info(StorageType type) noexcept {
  const auto* info = storage_type_info(static_cast<uint32_t>(type));
  return info ? *info : kTable[0];
}

std::optional<StorageType> storage_type_from_name(std::string_view name) noexcept {
  for (const auto& t : kTable)
    if (iequal(t.name, name)) return t.type;
  return std::nullopt;
}

std::string_view storage_type_name(StorageType type) noexcept {
  const auto* info = storage_type_info(static_cast<uint32_t>(type));
  return info ? info->name : std::string_view("?");
}

std::optional<uint64_t> storage_row_bytes(StorageType type, uint64_t n) noexcept {
  const auto* info = storage_type_info(static_cast<uint32_t>(type));
  if (!info || n % info->block_size != 0) return std::nullopt;
  const uint64_t blocks = n / info->block_size;
  if (blocks > UINT64_MAX / info->block_bytes) return std::nullopt;
  return blocks * info->block_bytes;
}

}  // namespace sy
