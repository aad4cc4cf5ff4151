// Names from a file, fit for a message: quoted, cut at a character boundary, with control
// characters and bytes that are not UTF-8 written as \xNN, so a message is always text.
// Shared by the gguf and hf readers.
#pragma once

#include <cstddef>
#include <string>

namespace sy::gguf {

/// `s` in single quotes, at most `max_bytes` of it ("..." marks a cut).
std::string quoted_text(const std::string& s, size_t max_bytes = 80);

}  // namespace sy::gguf
