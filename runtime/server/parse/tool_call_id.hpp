// Tool call ids: the same request always gets the same ids (no randomness), so that
// responses can be replayed and compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/parse/tool_formats.hpp"

namespace sy::server {

/// The id of tool call `n` (counted from 0 within a response): `prefix` followed by n, e.g.
/// prefix "call_req7_" gives "call_req7_0". Mistral's templates refuse an id that is not
/// exactly 9 characters when the conversation comes back, so for ToolFormat::mistral the id
/// is instead 9 base-62 digits (0-9, A-Z, a-z) of fnv1a64(prefix + n).
std::string tool_call_id(ToolFormat format, std::string_view prefix, size_t n);

/// 64-bit FNV-1a hash of the bytes of `s`.
uint64_t fnv1a64(std::string_view s);

}  // namespace sy::server
