// Reading one tool-call block of streamed text: it starts at its opening marker, and each
// look at the growing text says whether the block is complete (with its calls), still
// open, or cannot be a call (then the caller shows its text as content).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/parse/json_scan.hpp"
#include "server/parse/raw_call.hpp"

namespace sy::server {

struct BlockScan {
  enum class Kind { more, invalid, complete };
  Kind kind = Kind::more;
  size_t length = 0;  ///< complete: the bytes of text the block takes, marker included
  RawCalls calls;     ///< complete: at least one
};

/// Decisions must depend only on the bytes seen, never on how they were cut into pieces.
class BlockReader {
 public:
  virtual ~BlockReader() = default;
  /// Looks at the block so far: `text` starts with the opening marker and only grows from
  /// one call to the next; `final` when no more text will come.
  virtual BlockScan scan(std::string_view text, bool final) = 0;
};

/// What a format-specific check says about the start of a block body.
enum class Viability { no, yes, undecided };

/// The part between a marker and the JSON (Mistral's NAME[ARGS]): its length and the name.
struct HeaderScan {
  enum class Kind { more, invalid, ok };
  Kind kind = Kind::more;
  size_t length = 0;
  std::string name;
};
using HeaderFn = std::function<HeaderScan(std::string_view after_marker, bool final)>;
/// The calls a JSON value stands for, given the header's name (empty without a header).
using JsonCallsFn = std::function<std::optional<RawCalls>(const nlohmann::ordered_json& value, const std::string& name)>;

/// marker, optional header, a JSON object or array, optional whitespace and trailer (a
/// missing or cut trailer is forgiven at the end of the output).
class JsonBlockReader final : public BlockReader {
 public:
  JsonBlockReader(size_t marker_length, HeaderFn header, std::string trailer, JsonCallsFn to_calls);
  BlockScan scan(std::string_view text, bool final) override;

 private:
  size_t marker_;
  HeaderFn header_;
  std::string trailer_;
  JsonCallsFn to_calls_;
  bool header_done_ = false;
  std::string name_;
  size_t json_begin_ = 0;
  size_t cursor_ = 0;  // next byte for the scanner
  size_t json_end_ = std::string_view::npos;
  JsonScanner scanner_;
};

using ViableFn = std::function<Viability(std::string_view body)>;
using BodyFn = std::function<std::optional<RawCalls>(std::string_view body)>;

/// marker, body, closing tag; the body is parsed once the closing tag is there (or at the
/// end of the output), and `viable` refuses a body early from its first bytes.
class DelimitedBlockReader final : public BlockReader {
 public:
  DelimitedBlockReader(size_t marker_length, std::string close, ViableFn viable, BodyFn body);
  BlockScan scan(std::string_view text, bool final) override;

 private:
  size_t marker_;
  std::string close_;
  ViableFn viable_;
  BodyFn body_;
  bool confirmed_ = false;
  size_t searched_ = 0;  // the closing tag does not start before this
};

/// Skips spaces, tabs, carriage returns and newlines from `pos`.
size_t skip_ws(std::string_view s, size_t pos);

}  // namespace sy::server
