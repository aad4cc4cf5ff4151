// The storage types built into the runtime: GGUF's (ids 0..39, ggml_type, so a GGUF file
// maps without translation) and Switchyard's own layouts that backends compute natively
// (ids from 1000: FP8, grouped integers, interleaved rows). They are entries of the same
// registry and shape as a plugin's types, under the providers "gguf" and "core", added by
// the registry's constructor with their fixed ids (not through add(), whose checks a type
// without a reference dequantizer, such as IQ2_XXS or Q4_K_X16, would not pass).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "switchyard/types.hpp"

namespace sy::types {

/// A built-in type: its fixed id and the provider it is listed under.
struct BuiltinType {
  StorageType id;
  std::string_view provider;  ///< "gguf" or "core"
  bool in_gguf;               ///< a ggml_type valid in GGUF files
  StorageTypeDesc desc;
};

/// Every built-in type, in id order.
std::span<const BuiltinType> builtin_types() noexcept;

}  // namespace sy::types
