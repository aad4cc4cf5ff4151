// Finding tool calls in streamed answer text: text is released as content as soon as it
// cannot be the start of a marker, a block is held until its reader decides, and a block
// that is not a call goes out as content, so no text is lost.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/parse/format_markers.hpp"
#include "server/parse/raw_call.hpp"
#include "server/parse/tool_formats.hpp"

namespace sy::server {

/// Content text, or one call (when `is_call`).
struct ScanItem {
  bool is_call = false;
  std::string text;
  RawCall call;
};

/// Whitespace right before and right after a call is a separator the template writes (e.g.
/// Qwen's "\n" before <tool_call>), not content: it is dropped.
class ToolCallScanner {
 public:
  ToolCallScanner(ToolFormat format, std::shared_ptr<const nlohmann::json> tools);

  /// Adds answer text; appends what is decided to `out`.
  void push(std::string_view text, std::vector<ScanItem>& out);
  /// The answer ended: decides everything held.
  void finish(std::vector<ScanItem>& out);

 private:
  void run(bool final, std::vector<ScanItem>& out);
  void emit_text(std::string_view text, std::vector<ScanItem>& out);
  // The earliest full marker in buf_ (index into markers, position), and where a marker
  // may begin in the last bytes.
  void find_marker(size_t& which, size_t& at, size_t& partial) const;

  FormatMarkers markers_;
  std::string buf_;  // undecided text; while a block is open it starts with its marker
  std::unique_ptr<BlockReader> block_;
  size_t block_marker_ = 0;
  std::string held_ws_;      // trailing whitespace of the content so far
  bool after_call_ = false;  // drop whitespace until the next content
  bool at_start_ = true;     // nothing but whitespace seen yet (for leading_json)
};

}  // namespace sy::server
