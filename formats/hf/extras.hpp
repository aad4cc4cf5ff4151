// The optional files of a model folder that carry metadata rather than weights:
// tokenizer_config.json (the chat template) and generation_config.json (default sampling).
#pragma once

#include <filesystem>

#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"

namespace sy::hf {

/// Adds tokenizer.chat_template and general.sampling.* (llama.cpp's GGUF keys) from the files
/// present in `dir`; an absent file adds nothing, a damaged one is an error naming it.
Status add_folder_metadata(const std::filesystem::path& dir, Metadata& md);

}  // namespace sy::hf
