// OpenAI's response_format {"type": "json_object"}: before each sampled token, every token that
// cannot continue the output towards a JSON object (RFC 8259) is masked out.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "serving/json_prefix.hpp"
#include "serving/json_vocab.hpp"

namespace sy::serving {

/// Constrains one generation to a JSON object (leading whitespace allowed), then an end token.
/// The limits of JsonPrefix apply (nesting depth, whitespace runs, Unicode strings).
///
/// It assumes the vocabulary can spell the closing bytes (byte-level vocabularies can): a
/// prefix the mask allows can always be finished, but only by tokens that exist.
class JsonConstraint {
 public:
  /// Builds the vocabulary's tables for this constraint alone (see JsonVocab for the
  /// arguments). Serving many requests, build one JsonVocab and share it instead.
  JsonConstraint(std::span<const std::string> pieces, std::span<const uint8_t> is_special,
                 std::span<const int32_t> end_ids);
  /// A constraint over a shared vocabulary (not null); copies are cheap.
  explicit JsonConstraint(std::shared_ptr<const JsonVocab> vocab);

  /// Sets to -INFINITY the logit of every token that cannot come next; the others are left as
  /// they are. Entries past the vocabulary (padded logits) are masked too. End tokens are
  /// masked until the object is closed, and then only they remain. Allocates nothing and
  /// changes nothing here, so calls may run concurrently.
  void mask(std::span<float> logits) const { vocab_->mask(state_, logits); }
  /// Appends a token to the output. Returns false, changing nothing, for a token that mask()
  /// would have masked.
  bool accept(int32_t id) { return vocab_->append(state_, id); }
  /// The output is a whole JSON object: an end token may come now.
  [[nodiscard]] bool complete() const { return state_.complete(); }
  /// Back to the empty output (a new request).
  void reset() { state_ = JsonPrefix(JsonTop::object); }
  /// The recognizer after the accepted tokens.
  [[nodiscard]] const JsonPrefix& state() const { return state_; }

 private:
  std::shared_ptr<const JsonVocab> vocab_;
  JsonPrefix state_{JsonTop::object};
};

}  // namespace sy::serving
