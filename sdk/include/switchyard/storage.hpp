// Storage types: how a tensor's elements are laid out in memory, block by block.
// Ids 0..39 are GGUF's own (ggml_type), so GGUF files map without translation;
// Switchyard's additional types use ids from 1000 and are never written to GGUF; types
// that plugins register (types.hpp) get ids from 0x10000, given at registration. The
// runtime's registry answers every function here, in the runtime and in plugins.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace sy {

enum class StorageType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3,
  // 4, 5: Q4_2 and Q4_3, removed from GGUF before v1 files were common.
  Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  // 31..33: Q4_0_4_4 / Q4_0_4_8 / Q4_0_8_8, repacked layouts llama.cpp dropped from files.
  TQ1_0 = 34, TQ2_0 = 35,
  // 36..38: IQ4_NL_x_y, likewise dropped.
  MXFP4 = 39,

  // FP8 as stored by Hugging Face FP8 checkpoints: one byte per element; scales, if any,
  // live in a separate tensor (per-tensor or 128x128 blocks).
  FP8_E4M3 = 1000, FP8_E5M2 = 1001,
  // FP8 with an in-row f32 scale per block of 128 elements (what the loader repacks
  // block-scaled checkpoints into): 4-byte scale + 128 bytes.
  FP8_E4M3_B128 = 1002, FP8_E5M2_B128 = 1003,
  // Grouped integer weights (AWQ, GPTQ) repacked in-row: per group an f16 scale d,
  // an f16 zero point z (an exact small integer) and the codes q; x = (q - z) * d.
  I4_G32 = 1010, I4_G64 = 1011, I4_G128 = 1012,
  I8_G32 = 1020, I8_G64 = 1021, I8_G128 = 1022,
  // Q4_K with 16 rows interleaved (what the loader repacks Q4_K into for CPU kernels that
  // read 16 rows at once): a tensor of whole groups of 16 rows, each group a run of
  // 2304-byte super-block columns; the same bytes per element as Q4_K, but a row is not
  // contiguous (repack_rows() in quant.hpp gives the layout).
  Q4_K_X16 = 1030,
  // Q4_0 and Q8_0 with 16 rows interleaved the same way: 288- and 544-byte block columns.
  Q4_0_X16 = 1031, Q8_0_X16 = 1032,
  // I4_G32/64/128 with 16 rows interleaved alike (what the loader repacks AWQ and GPTQ
  // 4-bit weights into for the VNNI kernels): 320-, 576- and 1088-byte group columns.
  I4_G32_X16 = 1033, I4_G64_X16 = 1034, I4_G128_X16 = 1035,
  // Q6_K with 16 rows interleaved alike (ABI 3.3): 3360-byte super-block columns.
  Q6_K_X16 = 1036,
};

/// What a storage type is, for kernels, loaders and memory planning.
struct StorageTypeInfo {
  StorageType type;
  std::string_view name;     ///< canonical spelling: "Q4_K", "BF16", "I4_G128", "gptq.W3_G128"
  uint32_t block_size;       ///< elements per block (1 for plain scalar types)
  uint32_t block_bytes;      ///< bytes per block
  bool quantized;            ///< true when elements share scales inside a block
  bool in_gguf;              ///< true when the id is a ggml_type valid in GGUF files
  uint32_t group_size;       ///< for grouped integer types: elements per scale group, else 0
};

/// Every registered storage type: the built-in ones in id order, then plugins' types in
/// registration order. Entries stay valid for the life of the process.
std::vector<const StorageTypeInfo*> storage_types();

/// The entry for a type id; nullptr for an id that is not registered (including GGUF's
/// removed ids 4, 5, 31..33, 36..38). Check every id that comes from a file or a user here.
const StorageTypeInfo* storage_type_info(uint32_t id) noexcept;

/// The entry for a registered type. An unregistered id is a bug at this point (ids are
/// checked where they enter): the process stops with a message naming the id, rather
/// than compute with another type's geometry.
const StorageTypeInfo& storage_type_info(StorageType type) noexcept;

/// Type by name, case-insensitive ("q4_k" finds Q4_K): a canonical name, or the bare name
/// of a plugin's type ("W3_G128" for "gptq.W3_G128") while no other type has it.
std::optional<StorageType> storage_type_from_name(std::string_view name) noexcept;

/// Canonical name of a type ("?" for an unknown value).
std::string_view storage_type_name(StorageType type) noexcept;

/// Bytes of a row of n elements, or nullopt when n is not a multiple of the block size.
std::optional<uint64_t> storage_row_bytes(StorageType type, uint64_t n) noexcept;

}  // namespace sy
