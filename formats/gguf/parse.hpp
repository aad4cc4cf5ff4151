// Parsing one GGUF file (v2 or v3) from its bytes. Every length, count, offset and size
// is checked against the bytes that exist before it is used, so a corrupt or hostile file
// gets an error naming what is wrong, never a crash or an allocation larger than the file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"
#include "switchyard/tensor.hpp"

namespace sy::gguf {

/// GGUF's metadata value type ids.
enum class GType : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
  string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};

/// GGUF's id for a metadata kind, and back (nullopt for an unknown id).
GType gtype_of(MetaType t);
std::optional<MetaType> meta_type_of_gtype(uint32_t id);

inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr int kMaxArrayNesting = 8;

struct TensorInfo {
  TensorDesc desc;
  uint64_t offset = 0;  ///< from the start of the data section
};

/// One parsed file (one shard of a split model).
struct File {
  uint32_t version = 0;
  uint32_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;  ///< where the data section starts in the file
  std::vector<std::pair<std::string, MetaValue>> kv;  ///< in file order
  std::vector<TensorInfo> tensors;                    ///< in file order
};

/// Parses the header, metadata and tensor infos of a GGUF file held in `bytes`, and checks
/// that every tensor's data lies inside the file. `name` is used in messages.
Result<File> parse(std::span<const std::byte> bytes, const std::string& name);

}  // namespace sy::gguf
