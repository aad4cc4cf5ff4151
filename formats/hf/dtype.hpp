// safetensors element types: their names in the header, their sizes, and which of them the
// runtime stores as an existing storage type.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "switchyard/storage.hpp"

namespace sy::hf {

enum class Dtype : uint8_t { BOOL, U8, I8, F8_E4M3, F8_E5M2, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64 };

/// The dtype a header names ("BF16"), or nullopt for a name safetensors does not define.
std::optional<Dtype> dtype_from_name(std::string_view name) noexcept;
/// Its name as the header writes it.
const char* dtype_name(Dtype d) noexcept;
/// Bytes per element.
uint64_t dtype_size(Dtype d) noexcept;
/// Every name dtype_from_name() accepts, for messages: "BOOL, U8, ...".
const char* known_dtypes() noexcept;
/// The storage type an unquantized float tensor keeps (F32, F16, BF16); nullopt otherwise.
std::optional<StorageType> storage_of(Dtype d) noexcept;

}  // namespace sy::hf
