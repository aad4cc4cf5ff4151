// Registering storage types. A plugin that brings a weight layout of its own (a format's
// packed integers, an FP8 variant) describes it with a StorageTypeDesc and exports a table
// of them with SWITCHYARD_STORAGE_TYPES; the runtime's registry owns every type, gives
// each an id, and answers storage_type_info() and dequantize_row() for all of them, in the
// runtime and, through the host services handed over at load, in every plugin.
//
//   const sy::StorageTypeTable* my_types() noexcept {
//     static const sy::StorageTypeDesc d[] = {{.name = "W3_G128", .block_size = 128, ...}};
//     static const sy::StorageTypeTable t{sizeof(sy::StorageTypeTable), 1, d};
//     return &t;
//   }
//   SWITCHYARD_STORAGE_TYPES(my_types)
//
// Added in ABI 3.1: plain structs with a leading struct_size, so a later minor version can
// append fields and still read tables written against this one (3.2 appended
// quantize_row_weighted; a 3.1 table reads it as absent).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/dll/alias.hpp>

#include "switchyard/storage.hpp"

namespace sy {

/// Reference conversion of `n` elements (a whole number of blocks) to f32. Defines the type.
using DequantizeRowFn = void (*)(const void* src, float* dst, int64_t n) noexcept;
/// Reference conversion of `n` floats (a whole number of blocks) into the type.
using QuantizeRowFn = void (*)(const float* src, void* dst, int64_t n) noexcept;
/// The same, minimising sum_i weights[i] * (src[i] - value_i)^2 (weights >= 0, one per
/// element: importance from `switchyard imatrix`). Added in ABI 3.2.
using QuantizeRowWeightedFn = void (*)(const float* src, void* dst, int64_t n, const float* weights) noexcept;
/// Converts `rows` rows of `n` elements of the type into the type named by repack_to, exactly
/// (every value the same after dequantization); rows are contiguous on both sides.
using RepackRowsFn = void (*)(const void* src, void* dst, int64_t n, int64_t rows) noexcept;
/// Reference dot product of one row of `n` elements with f32 activations, accumulated in f64.
using DotRowFn = double (*)(const void* row, const float* x, int64_t n) noexcept;

/// Flags of a StorageTypeDesc.
inline constexpr uint32_t kStorageQuantized = 1;  ///< elements share scales inside a block

/// A storage type as a plugin declares it. Only `name`, the block geometry and
/// `dequantize_row` are required.
struct StorageTypeDesc {
  uint32_t struct_size = sizeof(StorageTypeDesc);
  /// Unique within the plugin: letters, digits and '_' ("W3_G128"). The registry keys the
  /// type as "<plugin>.<name>", so two plugins never collide; the bare name finds it too
  /// while no other type has it.
  const char* name = nullptr;
  uint32_t block_size = 1;   ///< elements per block
  uint32_t block_bytes = 0;  ///< bytes per block
  uint32_t group_size = 0;   ///< elements per scale group for grouped integer types, else 0
  uint32_t flags = 0;        ///< kStorageQuantized
  DequantizeRowFn dequantize_row = nullptr;
  QuantizeRowFn quantize_row = nullptr;  ///< optional
  /// Optional: a registered type that backends compute natively ("I4_G128", "Q8_0", or
  /// one declared earlier in the same table) and `repack` converting rows into it, at the
  /// same number of elements per row.
  const char* repack_to = nullptr;
  RepackRowsFn repack = nullptr;
  DotRowFn dot = nullptr;  ///< optional reference dot (tests dequantize and dot in f64 without one)
  QuantizeRowWeightedFn quantize_row_weighted = nullptr;  ///< optional; ABI 3.2
};

/// The types one plugin brings.
struct StorageTypeTable {
  uint32_t struct_size = sizeof(StorageTypeTable);
  uint32_t count = 0;
  const StorageTypeDesc* types = nullptr;
};

/// Signature of the exported type table function.
using StorageTypesFn = const StorageTypeTable*() noexcept;
/// Name of the exported alias the registry looks up (optional in a plugin).
inline constexpr const char* kStorageTypesSymbol = "switchyard_storage_types";

/// What the runtime hands a plugin at load: the one storage-type registry of the process.
/// Plugins do not call it directly; the SDK's storage functions (storage.hpp, quant.hpp)
/// go through it.
struct HostServices {
  uint32_t struct_size = sizeof(HostServices);
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  const StorageTypeInfo* (*type_by_id)(uint32_t id) noexcept = nullptr;
  /// Case-insensitive; "<plugin>.<name>" or a bare name that only one type has.
  const StorageTypeInfo* (*type_by_name)(const char* name, size_t size) noexcept = nullptr;
  size_t (*type_count)() noexcept = nullptr;
  const StorageTypeInfo* (*type_at)(size_t index) noexcept = nullptr;
  /// The reference functions of a type, or nullptr for an unknown id.
  const StorageTypeDesc* (*type_desc)(uint32_t id) noexcept = nullptr;
  /// The plugin (or "gguf" / "core" for the runtime's own) that registered a type.
  const char* (*type_provider)(uint32_t id) noexcept = nullptr;
};

/// Signature of the exported attach function, called once at load before any factory.
using AttachFn = void(const HostServices* host) noexcept;
/// Name of the exported alias; SWITCHYARD_PLUGIN exports it.
inline constexpr const char* kAttachSymbol = "switchyard_attach";

/// The plugin (or "gguf" / "core") that brings a type; empty for an unknown id.
std::string_view storage_type_provider(StorageType type) noexcept;

/// The registered functions of a type; nullptr for an unknown id.
const StorageTypeDesc* storage_type_desc(StorageType type) noexcept;

namespace detail {
/// Receives the host services in a plugin (exported by SWITCHYARD_PLUGIN).
void attach_host(const HostServices* host) noexcept;
/// The services the storage functions answer from: the runtime's own table in the runtime,
/// the attached one in a plugin (nullptr before attach).
const HostServices* host() noexcept;
}  // namespace detail

}  // namespace sy

/// Exports `fn` (a `const sy::StorageTypeTable* fn() noexcept`) as the plugin's type table.
#define SWITCHYARD_STORAGE_TYPES(fn) BOOST_DLL_ALIAS(fn, switchyard_storage_types)
