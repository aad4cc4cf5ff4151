// GPTQ packs b-bit values into int32 words as one little-endian bit stream: value i occupies
// stream bits [i*b, (i+1)*b), stream bit 32w + j being bit j of word w. For 2, 4 and 8 bits no
// value straddles two words; 3-bit values do.
#pragma once

#include <cstdint>

namespace sy::gptq {

/// Value `i` of a stream whose word w is `word(w)`.
template <typename Word>
uint32_t stream_value(Word&& word, uint64_t i, int bits) {
  const uint64_t pos = i * static_cast<uint64_t>(bits);
  const uint64_t w = pos / 32;
  const unsigned off = static_cast<unsigned>(pos % 32);
  uint64_t v = static_cast<uint32_t>(word(w)) >> off;
  if (off + static_cast<unsigned>(bits) > 32) v |= static_cast<uint64_t>(static_cast<uint32_t>(word(w + 1))) << (32 - off);
  return static_cast<uint32_t>(v & ((1u << bits) - 1u));
}

}  // namespace sy::gptq
