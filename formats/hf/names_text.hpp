// Names from a file, fit for a message: the gguf reader's quoting (quoted.hpp), shared.
#pragma once

#include "quoted.hpp"

namespace sy::hf {

using gguf::quoted_text;

}  // namespace sy::hf
