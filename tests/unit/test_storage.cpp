// The storage-type table against ggml's block layouts, recomputed here field by field
// from the block_* struct definitions in ggml-common.h (QK_K = 256, K_SCALE_SIZE = 12).
#include <catch2/catch.hpp>

#include "switchyard/storage.hpp"
#include "switchyard/tensor.hpp"

using sy::StorageType;

namespace {
constexpr uint32_t QK_K = 256;
constexpr uint32_t half = 2;

struct Expect {
  uint32_t id;
  const char* name;
  uint32_t block;
  uint32_t bytes;
};

// {ggml_type id, name, elements per block, sizeof(block_*)}
const Expect kGguf[] = {
    {0, "F32", 1, 4},
    {1, "F16", 1, 2},
    {2, "Q4_0", 32, half + 32 / 2},
    {3, "Q4_1", 32, 2 * half + 32 / 2},
    {6, "Q5_0", 32, half + 4 + 32 / 2},
    {7, "Q5_1", 32, 2 * half + 4 + 32 / 2},
    {8, "Q8_0", 32, half + 32},
    {9, "Q8_1", 32, 2 * half + 32},
    {10, "Q2_K", QK_K, QK_K / 16 + QK_K / 4 + 2 * half},
    {11, "Q3_K", QK_K, QK_K / 8 + QK_K / 4 + 12 + half},
    {12, "Q4_K", QK_K, 2 * half + 12 + QK_K / 2},
    {13, "Q5_K", QK_K, 2 * half + 12 + QK_K / 8 + QK_K / 2},
    {14, "Q6_K", QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + half},
    {15, "Q8_K", QK_K, 4 + QK_K + QK_K / 16 * 2},
    {16, "IQ2_XXS", QK_K, half + QK_K / 8 * 2},
    {17, "IQ2_XS", QK_K, half + QK_K / 8 * 2 + QK_K / 32},
    {18, "IQ3_XXS", QK_K, half + 3 * QK_K / 8},
    {19, "IQ1_S", QK_K, half + QK_K / 8 + QK_K / 32 * 2},
    {20, "IQ4_NL", 32, half + 32 / 2},
    {21, "IQ3_S", QK_K, half + QK_K / 4 + QK_K / 32 + QK_K / 8 + QK_K / 64},
    {22, "IQ2_S", QK_K, half + QK_K / 4 + QK_K / 32 + QK_K / 32},
    {23, "IQ4_XS", QK_K, half + 2 + QK_K / 64 + QK_K / 2},
    {24, "I8", 1, 1},
    {25, "I16", 1, 2},
    {26, "I32", 1, 4},
    {27, "I64", 1, 8},
    {28, "F64", 1, 8},
    {29, "IQ1_M", QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32},
    {30, "BF16", 1, 2},
    {34, "TQ1_0", QK_K, (QK_K - 4 * QK_K / 64) / 5 + QK_K / 64 + half},
    {35, "TQ2_0", QK_K, QK_K / 4 + half},
    {39, "MXFP4", 32, 1 + 32 / 2},
};
}  // namespace

TEST_CASE("every GGUF tensor type has ggml's block size and bytes per block", "[sdk][storage]") {
  for (const auto& e : kGguf) {
    INFO(e.name);
    const auto* info = sy::storage_type_info(e.id);
    REQUIRE(info != nullptr);
    CHECK(info->name == e.name);
    CHECK(info->block_size == e.block);
    CHECK(info->block_bytes == e.bytes);
    CHECK(info->in_gguf);
    CHECK(sy::storage_type_from_name(e.name) == info->type);
  }
}

TEST_CASE("removed GGUF ids are unknown, not misread", "[sdk][storage]") {
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 999u}) {
    INFO(id);
    CHECK(sy::storage_type_info(id) == nullptr);
  }
}

TEST_CASE("Switchyard's own types: FP8 with block scales and grouped integers", "[sdk][storage]") {
  const auto& e4 = sy::storage_type_info(StorageType::FP8_E4M3);
  CHECK(e4.block_size == 1);
  CHECK(e4.block_bytes == 1);
  CHECK_FALSE(e4.in_gguf);
  const auto& e4b = sy::storage_type_info(StorageType::FP8_E4M3_B128);
  CHECK(e4b.block_size == 128);
  CHECK(e4b.block_bytes == 4 + 128);  // f32 scale + one byte per element
  // Grouped int4: f16 scale + f16 zero point + two codes per byte.
  for (auto [t, g] : {std::pair{StorageType::I4_G32, 32u}, {StorageType::I4_G64, 64u}, {StorageType::I4_G128, 128u}}) {
    const auto& i = sy::storage_type_info(t);
    CHECK(i.group_size == g);
    CHECK(i.block_bytes == 4 + g / 2);
  }
  for (auto [t, g] : {std::pair{StorageType::I8_G32, 32u}, {StorageType::I8_G64, 64u}, {StorageType::I8_G128, 128u}}) {
    const auto& i = sy::storage_type_info(t);
    CHECK(i.group_size == g);
    CHECK(i.block_bytes == 4 + g);
  }
  for (const auto* t : sy::storage_types())
    if (static_cast<uint32_t>(t->type) >= 1000) CHECK_FALSE(t->in_gguf);
}

TEST_CASE("row and tensor sizes", "[sdk][storage]") {
  CHECK(sy::storage_row_bytes(StorageType::Q4_K, 4096) == 4096 / 256 * 144);
  CHECK_FALSE(sy::storage_row_bytes(StorageType::Q4_K, 100).has_value());  // not a whole block
  CHECK(sy::tensor_bytes(StorageType::Q8_0, {64, 3}) == 2 * 34 * 3);
  CHECK(sy::tensor_bytes(StorageType::F32, {}) == 4);
  CHECK_FALSE(sy::tensor_bytes(StorageType::F32, {-1}).has_value());
  // 2^62 elements of 4 bytes overflow 64 bits.
  CHECK_FALSE(sy::tensor_bytes(StorageType::F32, {int64_t{1} << 31, int64_t{1} << 31}).has_value());
  CHECK(sy::storage_type_from_name("q4_k") == StorageType::Q4_K);
  CHECK_FALSE(sy::storage_type_from_name("Q4_L").has_value());
}
