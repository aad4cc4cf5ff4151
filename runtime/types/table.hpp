// Reading a plugin's storage-type table safely: its declared sizes are checked before any
// entry is touched, and entries are read at the plugin's own stride (a plugin built against
// a later minor version may declare longer entries).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "switchyard/types.hpp"

namespace sy::types {

/// The fields a table written against ABI 3.1 holds; a longer entry is read up to them.
inline constexpr size_t kMinDescSize = offsetof(StorageTypeDesc, dot) + sizeof(DotRowFn);

/// Why the table cannot be read (a sentence, for "plugin 'x' ..."), or nullopt: the table
/// struct too small, more than 4096 types, no array, or entries whose struct_size is below
/// the minimum, above 1024 bytes, or not the same for all.
std::optional<std::string> table_problem(const StorageTypeTable& t);

/// Entry i; only for a table table_problem() accepted.
const StorageTypeDesc& table_entry(const StorageTypeTable& t, uint32_t i);

}  // namespace sy::types
