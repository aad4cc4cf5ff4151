// One safetensors file: an 8-byte little-endian header length N, N bytes of JSON
// (`name: {dtype, shape, data_offsets}` and an optional `__metadata__` of strings), then the
// data. Every field is checked against the bytes that exist before it is used, so a damaged
// or hostile file gets a sentence naming the file, the tensor and the field, never a crash.
// The Hugging Face reader and the quantized-checkpoint readers (awq, gptq, fp8) share it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "mapped_file.hpp"
#include "switchyard/status.hpp"

namespace sy::hf {

/// Headers beyond this are refused before they are read (the reference implementation's
/// limit): real ones are a few hundred KiB even for thousands of tensors.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct StTensor {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<int64_t> shape;  ///< as written: outermost dimension first
  uint64_t begin = 0;          ///< absolute offset in the file
  uint64_t bytes = 0;
};

struct StHeader {
  uint64_t data_offset = 0;                       ///< 8 + N
  std::vector<StTensor> tensors;                  ///< in header order
  std::map<std::string, std::string> metadata;    ///< `__metadata__`
};

/// Parses and validates the header of a safetensors file held in `bytes` (the whole file).
/// `name` (the file) starts every message.
Result<StHeader> parse_header(std::span<const std::byte> bytes, const std::string& name);

/// A safetensors file, memory-mapped read-only, with its validated header.
class SafetensorsFile {
 public:
  static Result<std::unique_ptr<SafetensorsFile>> open(const std::filesystem::path& path);

  [[nodiscard]] const StHeader& header() const { return header_; }
  [[nodiscard]] const std::filesystem::path& path() const { return map_->path(); }
  /// The tensor of this name, or nullptr.
  [[nodiscard]] const StTensor* find(const std::string& name) const;
  /// The whole file, mapped.
  [[nodiscard]] std::span<const std::byte> bytes() const { return map_->bytes(); }
  /// A tensor's bytes, in place in the mapping.
  [[nodiscard]] std::span<const std::byte> data(const StTensor& t) const {
    return map_->bytes().subspan(static_cast<size_t>(t.begin), static_cast<size_t>(t.bytes));
  }

 private:
  std::unique_ptr<gguf::MappedFile> map_;
  StHeader header_;
  std::map<std::string, size_t, std::less<>> index_;
};

}  // namespace sy::hf
