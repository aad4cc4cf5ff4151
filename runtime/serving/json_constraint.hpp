// OpenAI's response_format {"type": "json_object"}: before each sampled token, every token that
// cannot continue the output towards a JSON object (RFC 8259) is masked out.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "serving/json_prefix.hpp"

namespace sy::serving {

/// Constrains a generation to one JSON object (leading whitespace allowed), then an end token.
/// The limits of JsonPrefix apply (nesting depth, whitespace runs, Unicode strings). Tokens
/// are taken as the bytes they decode to, so a token may end inside a UTF-8 sequence.
///
/// It assumes the vocabulary can spell the closing bytes (byte-level vocabularies can): a
/// prefix the mask allows can always be finished, but only by tokens that exist.
class JsonConstraint {
 public:
  /// `pieces[id]` is the bytes of token `id`. Tokens marked in `is_special` (control tokens;
  /// ids past its end count as not special) and tokens with no bytes are never allowed as
  /// text; `end_ids` end the generation and are allowed only once the object is closed.
  JsonConstraint(std::span<const std::string> pieces, std::span<const uint8_t> is_special,
                 std::span<const int32_t> end_ids);

  /// Sets to -INFINITY the logit of every token that cannot come next; the others are left as
  /// they are. Entries past the vocabulary (padded logits) are masked too. Once the object is
  /// closed only end tokens remain. Allocates nothing and changes nothing here, so calls may
  /// run concurrently.
  void mask(std::span<float> logits) const;
  /// Appends a token to the output. Returns false, changing nothing, for a token that mask()
  /// would have masked.
  bool accept(int32_t id);
  /// The output is a whole JSON object: an end token may come now.
  [[nodiscard]] bool complete() const { return state_.complete(); }
  /// Back to the empty output (a new request).
  void reset() { state_ = JsonPrefix(JsonTop::object); }
  /// The recognizer after the accepted tokens.
  [[nodiscard]] const JsonPrefix& state() const { return state_; }

 private:
  [[nodiscard]] bool is_end(int32_t id) const;

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
  size_t vocab_ = 0;
  JsonPrefix state_{JsonTop::object};
};

}  // namespace sy::serving
