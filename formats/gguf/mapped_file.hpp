// A read-only memory map of a whole file: weights are viewed in place, never copied.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "switchyard/status.hpp"

namespace sy::gguf {

class MappedFile {
 public:
  /// Maps `path` read-only. Errors name the file and the system's reason.
  static Result<std::unique_ptr<MappedFile>> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  [[nodiscard]] std::span<const std::byte> bytes() const { return {data_, size_}; }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::filesystem::path path_;
};

}  // namespace sy::gguf
