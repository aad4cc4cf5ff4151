// Byte counts for people: "1.50 GiB".
#pragma once

#include <cstdint>
#include <string>

namespace sy::util {

/// Binary units with two decimals ("512 B", "1.50 GiB").
std::string human_bytes(uint64_t b);

}  // namespace sy::util
