#include "synth/vocab.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "tokenizer/tokenizer.hpp"
#include "util/read_file.hpp"

namespace sy::synth {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // ▁, SentencePiece's space

}  // namespace

MetaEntries synthetic_vocab(int64_t n_vocab) {
  MetaArray toks{MetaType::string, {}}, scores{MetaType::f32, {}}, types{MetaType::i32, {}};
  auto add = [&](std::string piece, int32_t type) {
    toks.items.emplace_back(std::move(piece));
    scores.items.emplace_back(type == 1 ? -static_cast<float>(toks.items.size()) : 0.0f);
    types.items.emplace_back(type);
  };
  add("<unk>", 2);
  for (const char* c : {"<s>", "</s>", "<|im_start|>", "<|im_end|>"}) add(c, 3);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 6);
  }
  const auto full = [&] { return static_cast<int64_t>(toks.items.size()) >= n_vocab; };
  for (const char* p : {".", ",", "!", "?", "'", ":", ";", "-", "\n"})
    if (!full()) add(p, 1);
  // Lower-case letter strings, shortest first: 26 + 676 + 17576 + 456976 (x2 with the
  // space-prefixed form) is more than any real vocabulary.
  std::string word;
  for (size_t len = 1; !full() && len <= 4; ++len) {
    word.assign(len, 'a');
    for (;;) {
      add(std::string(kSpace) + word, 1);
      if (full()) break;
      add(word, 1);
      if (full()) break;
      size_t i = len;
      while (i > 0 && word[i - 1] == 'z') word[--i] = 'a';
      if (i == 0) break;
      ++word[i - 1];
    }
  }
  MetaEntries md;
  md.emplace_back("tokenizer.ggml.model", std::string("llama"));
  md.emplace_back("tokenizer.ggml.tokens", std::move(toks));
  md.emplace_back("tokenizer.ggml.scores", std::move(scores));
  md.emplace_back("tokenizer.ggml.token_type", std::move(types));
  md.emplace_back("tokenizer.ggml.unknown_token_id", uint32_t{0});
  md.emplace_back("tokenizer.ggml.bos_token_id", uint32_t{1});
  md.emplace_back("tokenizer.ggml.eos_token_id", uint32_t{2});
  md.emplace_back("tokenizer.ggml.eot_token_id", uint32_t{4});
  md.emplace_back("tokenizer.ggml.add_bos_token", true);
  md.emplace_back("tokenizer.chat_template",
                  std::string("{%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}"
                              "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}"));
  return md;
}

Result<MetaEntries> hf_vocab(const std::filesystem::path& tokenizer_json, int64_t n_vocab) {
  auto t = tok::Tokenizer::from_hf(tokenizer_json);
  if (!t) return t.status();
  if ((*t)->n_vocab() > n_vocab)
    return error::invalid_argument(tokenizer_json.string() + " has " + std::to_string((*t)->n_vocab()) +
                                   " tokens but the model's vocabulary has " + std::to_string(n_vocab) +
                                   "; pick the matching topology or --vocab");
  auto md = (*t)->gguf_metadata(n_vocab);
  if (!md) return Status(md.status().code(), tokenizer_json.string() + ": " + md.status().message());
  const auto cfg_path = tokenizer_json.parent_path() / "tokenizer_config.json";
  auto cfg_text = util::read_optional_file(cfg_path, "the tokenizer config");
  if (!cfg_text) return cfg_text.status();
  if (*cfg_text) {
    const auto cfg = nlohmann::json::parse(**cfg_text, nullptr, false);
    if (cfg.is_object() && cfg.contains("chat_template") && cfg["chat_template"].is_string())
      md->emplace_back("tokenizer.chat_template", cfg["chat_template"].get<std::string>());
  }
  return std::move(*md);
}

}  // namespace sy::synth
