// Per tool-call format: the markers that open a block in the model's text, and the reader
// that takes the block from there.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/parse/tool_blocks.hpp"
#include "server/parse/tool_formats.hpp"

namespace sy::server {

using ReaderFactory = std::function<std::unique_ptr<BlockReader>()>;

struct BlockMarker {
  std::string text;
  ReaderFactory reader;  ///< null: a wrapper token that is removed and opens nothing
};

struct FormatMarkers {
  std::vector<BlockMarker> markers;
  /// Non-null when a JSON object at the very start of the answer is a call (Llama 3.x).
  ReaderFactory leading_json;
};

/// The markers of `format`; `tools` (the request's tools array, or null) types the values
/// of formats that write arguments as text.
FormatMarkers format_markers(ToolFormat format, std::shared_ptr<const nlohmann::json> tools);

}  // namespace sy::server
