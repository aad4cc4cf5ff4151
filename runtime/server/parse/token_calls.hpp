// Tool calls framed by special tokens: Kimi-K2, DeepSeek (V3.1 and R1), and the header
// that Mistral Small 3.2 writes between [TOOL_CALLS] and the arguments.
#pragma once

#include <optional>
#include <string_view>

#include "server/parse/raw_call.hpp"
#include "server/parse/tool_blocks.hpp"

namespace sy::server {

/// A Kimi-K2 call body (between <|tool_call_begin|> and <|tool_call_end|>):
/// `functions.NAME:N<|tool_call_argument_begin|>{...}`; the name is the id without the
/// "functions." prefix and the ":N" counter.
std::optional<RawCalls> kimi_call(std::string_view body);

/// A DeepSeek call body (between <｜tool▁call▁begin｜> and <｜tool▁call▁end｜>): V3.1's
/// `NAME<｜tool▁sep｜>{...}`, or R1's `function<｜tool▁sep｜>NAME` + newline + a ```json
/// fenced object.
std::optional<RawCalls> deepseek_call(std::string_view body);

/// Mistral's text after [TOOL_CALLS]: either a JSON array follows (Nemo; empty name), or
/// `NAME[ARGS]` or `NAME[CALL_ID]ID[ARGS]` (Small 3.2) with the JSON object after it.
HeaderScan mistral_header(std::string_view after_marker, bool final);

}  // namespace sy::server
