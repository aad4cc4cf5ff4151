// Writing an output file so that a reader never sees half of it: the bytes go to a hidden
// temporary file in the target's folder, which is synced and then renamed over the target
// (rename within one file system is atomic). An interrupted or failed write leaves the
// target as it was: the temporary is removed by the destructor, or, after SIGKILL or a
// crash, stays behind under its own ".NAME.*.partial" name, never under the final one.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "switchyard/status.hpp"

namespace sy::util {

class AtomicFile {
 public:
  /// Creates the temporary file beside `target`. `what` names the output in messages
  /// ("--save-logits").
  static Result<AtomicFile> create(const std::filesystem::path& target, std::string_view what);

  AtomicFile(AtomicFile&& o) noexcept;
  AtomicFile& operator=(AtomicFile&& o) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// Removes the temporary unless commit() succeeded.
  ~AtomicFile();

  /// Appends bytes; a full disk or any write error is a sentence naming the target.
  Status write(std::span<const std::byte> bytes);
  template <class T>
  Status write_values(std::span<const T> values) {
    return write(std::as_bytes(values));
  }
  /// Syncs the data, renames the temporary over the target and syncs the folder.
  Status commit();

  [[nodiscard]] const std::filesystem::path& temp_path() const { return temp_; }
  [[nodiscard]] uint64_t bytes_written() const { return written_; }

 private:
  AtomicFile() = default;
  void discard() noexcept;

  int fd_ = -1;
  std::filesystem::path target_, temp_;
  std::string what_;
  uint64_t written_ = 0;
};

}  // namespace sy::util
