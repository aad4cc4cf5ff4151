// What a vocabulary's tokens do to a JSON prefix, laid out so that masking a 150k-token
// vocabulary takes well under a millisecond or two: built once per model, shared by requests.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "serving/json_prefix.hpp"

namespace sy::serving {

/// The tokens of one vocabulary as JSON text. Tokens are taken as the bytes they decode to,
/// so a token may end inside a UTF-8 sequence. Immutable once built.
class JsonVocab {
 public:
  /// `pieces[id]` is the bytes of token `id`. Tokens marked in `is_special` (control tokens;
  /// ids past its end count as not special) and tokens with no bytes are never text;
  /// `end_ids` end the generation (ids outside the vocabulary are ignored).
  JsonVocab(std::span<const std::string> pieces, std::span<const uint8_t> is_special,
            std::span<const int32_t> end_ids);

  /// Sets to -INFINITY the logit of every token that cannot follow `state`; the others are
  /// left as they are. Entries past the vocabulary (padded logits) are masked too. End tokens
  /// stay only when `state` is complete(); once it is closed() only they stay. Allocates
  /// nothing.
  void mask(const JsonPrefix& state, std::span<float> logits) const;
  /// Appends token `id` to `state` when mask() would have left it, and says whether it did;
  /// otherwise `state` is unchanged. An end token appends nothing.
  bool append(JsonPrefix& state, int32_t id) const;
  [[nodiscard]] bool is_end(int32_t id) const;
  /// The number of tokens.
  [[nodiscard]] size_t size() const { return size_; }

 private:
  // Text tokens (not special, not end, not empty) grouped by first byte, so that a state
  // refusing a byte skips its whole group. Within a group the tokens that are plain string
  // text (no '"', '\\', control bytes; whole UTF-8 characters) come first: inside a string
  // they are allowed without reading them.
  std::vector<int32_t> ids_;      // in group order
  std::vector<uint32_t> start_;   // token i's bytes are bytes_[start_[i], start_[i + 1])
  std::string bytes_;
  std::array<uint32_t, 257> group_{};  // the tokens with first byte b: [group_[b], group_[b + 1])
  std::array<uint32_t, 256> plain_end_{};  // group b's plain string text: [group_[b], plain_end_[b])
  std::vector<int32_t> slot_;     // token id -> its index in ids_, or -1
  std::vector<int32_t> end_ids_;  // in range, sorted, unique
  std::vector<int32_t> blocked_;  // special and empty tokens that are not end tokens
  size_t size_ = 0;
};

}  // namespace sy::serving
