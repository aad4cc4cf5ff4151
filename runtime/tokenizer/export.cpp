// A tokenizer written back as GGUF keys, the way llama.cpp's converter writes them.
#include <algorithm>

#include "tokenizer/tokenizer.hpp"

namespace sy::tok {

Result<std::vector<std::pair<std::string, MetaValue>>> Tokenizer::gguf_metadata(int64_t pad_to) const {
  const bool spm = kind_ == Kind::spm;
  if (!spm && pre_name_.empty())
    return error::unsupported("the tokenizer's pre-tokenizer regexes match no tokenizer.ggml.pre this build knows, "
                              "so a GGUF file could not name it");
  std::vector<std::pair<std::string, MetaValue>> md;
  MetaArray toks{MetaType::string, {}}, types{MetaType::i32, {}};
  for (size_t i = 0; i < tokens_.size(); ++i) {
    toks.items.emplace_back(tokens_[i]);
    types.items.emplace_back(types_[i]);
  }
  // Rows past the tokenizer's last id exist in real checkpoints (padding to a multiple of 128).
  for (int64_t i = static_cast<int64_t>(tokens_.size()); i < pad_to; ++i) {
    toks.items.emplace_back("[PAD" + std::to_string(i) + "]");
    types.items.emplace_back(int32_t{5});
  }
  md.emplace_back("tokenizer.ggml.model", std::string(spm ? "llama" : "gpt2"));
  if (!spm) md.emplace_back("tokenizer.ggml.pre", pre_name_);
  md.emplace_back("tokenizer.ggml.tokens", std::move(toks));
  md.emplace_back("tokenizer.ggml.token_type", std::move(types));
  if (spm) {
    MetaArray scores{MetaType::f32, {}};
    for (float s : scores_) scores.items.emplace_back(s);
    md.emplace_back("tokenizer.ggml.scores", std::move(scores));
  } else {
    std::vector<std::pair<int32_t, const std::string*>> ranked;
    for (const auto& [k, rank] : merges_) ranked.emplace_back(rank, &k);
    std::sort(ranked.begin(), ranked.end());
    MetaArray merges{MetaType::string, {}};
    for (const auto& [rank, k] : ranked) merges.items.emplace_back(*k);
    md.emplace_back("tokenizer.ggml.merges", std::move(merges));
  }
  if (bos_ >= 0) md.emplace_back("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(bos_));
  if (eos_ >= 0) md.emplace_back("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eos_));
  if (unk_ >= 0) md.emplace_back("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(unk_));
  md.emplace_back("tokenizer.ggml.add_bos_token", add_bos_);
  md.emplace_back("tokenizer.ggml.add_eos_token", add_eos_);
  if (spm) md.emplace_back("tokenizer.ggml.add_space_prefix", add_space_prefix_);
  // GGUF has no key for a normaliser (llama.cpp skips Qwen's NFC step); ours keeps it.
  if (nfc_) md.emplace_back("tokenizer.switchyard.normalizer", std::string("NFC"));
  return md;
}

}  // namespace sy::tok
