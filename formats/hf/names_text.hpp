// Names from a file, fit for a message: quoted, cut at a character boundary, with control
// characters and bytes that are not UTF-8 written as \xNN, so a message is always text.
#pragma once

#include <string>

namespace sy::hf {

std::string quoted_text(const std::string& s, size_t max_bytes = 80);

}  // namespace sy::hf
