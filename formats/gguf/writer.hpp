// Writing GGUF v3 files: metadata in the order given, tensors aligned. Used by tests now,
// and by synth, quantize and convert. Writes to a temporary file and renames it into place,
// so a failed write never destroys an existing file.
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"
#include "switchyard/tensor.hpp"

namespace sy::gguf {

class Writer {
 public:
  /// Produces a tensor's bytes into `out` (exactly desc.bytes long); lets callers stream
  /// data that is not in memory (a 20 GB synthetic model).
  using Fill = std::function<Status(std::span<std::byte> out)>;

  /// Data alignment (a power of two; default 32). Also written as general.alignment when
  /// it differs from the default.
  Status set_alignment(uint32_t alignment);
  /// Appends a metadata entry (a repeated key is an error at write()).
  void add(std::string key, MetaValue value);
  /// Appends a tensor whose bytes are `data` (kept by reference until write()).
  void add_tensor(TensorDesc desc, std::span<const std::byte> data);
  /// Appends a tensor whose bytes `fill` produces at write time.
  void add_tensor(TensorDesc desc, Fill fill);
  /// Writes the file. Checks: keys and names unique, types storable in GGUF, sizes
  /// consistent with shapes.
  Status write(const std::filesystem::path& path) const;

 private:
  struct Pending {
    TensorDesc desc;
    Fill fill;
  };
  uint32_t alignment_ = 32;
  std::vector<std::pair<std::string, MetaValue>> kv_;
  std::vector<Pending> tensors_;
};

}  // namespace sy::gguf
