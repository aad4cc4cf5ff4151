// Tokenizers for synth files: a synthetic SentencePiece vocabulary of any size (so a
// synthetic model's output layer and embedding table cost what the real model's do), or a
// real tokenizer.json converted to GGUF keys.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"

namespace sy::synth {

using MetaEntries = std::vector<std::pair<std::string, MetaValue>>;

/// n_vocab tokens: <unk> <s> </s> <|im_start|> <|im_end|>, the 256 byte tokens, then
/// letter pieces ("▁a", "a", "▁b", ... "▁ab", "ab", ...), earlier pieces scoring higher;
/// plus a ChatML chat template. n_vocab must be at least 300.
MetaEntries synthetic_vocab(int64_t n_vocab);

/// The tokenizer in `tokenizer_json` (with tokenizer_config.json beside it, whose chat
/// template is kept) as GGUF keys. Fails when it has more tokens than n_vocab.
Result<MetaEntries> hf_vocab(const std::filesystem::path& tokenizer_json, int64_t n_vocab);

}  // namespace sy::synth
