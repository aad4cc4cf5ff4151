// The token ids bench feeds: a fixed sequence within the vocabulary, the same in every
// process and on both paths, so repetitions and runs compare like with like.
#pragma once

#include <cstdint>

namespace sy::bench {

/// A fixed 64-bit LCG (Knuth's MMIX constants); its high bits are well mixed, the low ones
/// are not, so ids come from the top.
struct TokenIds {
  uint64_t x = 0x5357'4954'4348'5944ull;
  int64_t n_vocab = 1;
  int32_t next() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int32_t>((x >> 33) % static_cast<uint64_t>(n_vocab));
  }
};

}  // namespace sy::bench
