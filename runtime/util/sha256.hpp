// SHA-256 (FIPS 180-4), incremental, for checking downloaded model files against the
// digests their publishers list. Scalar; a model file is read once, so the disk is the limit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

#include "switchyard/status.hpp"

namespace sy::util {

class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::byte> data);
  /// The digest as 64 lower-case hex digits; the object must not be updated after.
  std::string hex();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t used_ = 0;
  uint64_t bytes_ = 0;
};

/// The digest of a whole file; `progress` (optional) gets the bytes read so far.
Result<std::string> sha256_file(const std::filesystem::path& path,
                                const std::function<void(uint64_t done, uint64_t total)>& progress = {});

}  // namespace sy::util
