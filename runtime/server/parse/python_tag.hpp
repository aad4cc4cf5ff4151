// Llama 3.1's <|python_tag|>: followed either by a JSON call (a custom tool) or by a
// built-in tool call, which its template writes as `NAME.call(key="value", ...)`.
#pragma once

#include <memory>
#include <string_view>

#include "server/parse/tool_blocks.hpp"

namespace sy::server {

/// The built-in call at the start of `s`, as the template writes it: an identifier,
/// ".call(", then `key="value"` pairs separated by ", " (values are strings, quoted without
/// escapes), then ")". BlockScan::length counts from the start of `s`.
BlockScan builtin_tool_call(std::string_view s, bool final);

/// Reads the block after <|python_tag|> as a JSON call or a built-in call, whichever it
/// starts like.
class PythonTagReader final : public BlockReader {
 public:
  explicit PythonTagReader(size_t marker_length) : marker_(marker_length) {}
  BlockScan scan(std::string_view text, bool final) override;

 private:
  size_t marker_;
  std::unique_ptr<BlockReader> json_;
};

}  // namespace sy::server
