// Tokenizers: SentencePiece-style (GGUF model "llama": scores, byte fallback, leading
// space) and byte-level BPE (GGUF "gpt2" with merges and a pre-tokenizer chosen by
// tokenizer.ggml.pre, or a Hugging Face tokenizer.json). Special and added tokens are cut
// out of the text first; which of them count depends on parse_special.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"
#include "tokenizer/pretokenize.hpp"

namespace sy::tok {

class Tokenizer {
 public:
  enum class Kind { spm, bpe };

  /// From GGUF metadata (tokenizer.ggml.*). `source` (the model file) starts error messages.
  static Result<std::unique_ptr<Tokenizer>> from_gguf(const Metadata& md, std::string_view source = "the model");
  /// From a Hugging Face tokenizer.json, plus tokenizer_config.json when it exists beside
  /// it (BOS/EOS and add_bos/add_eos).
  static Result<std::unique_ptr<Tokenizer>> from_hf(const std::filesystem::path& tokenizer_json);
  /// The same from the two documents' text (`config_json` absent: no tokenizer_config.json);
  /// the names start error messages.
  static Result<std::unique_ptr<Tokenizer>> from_hf_text(std::string_view tokenizer_json,
                                                         std::optional<std::string_view> config_json,
                                                         const std::string& name, const std::string& config_name);

  /// Token ids of `text`. add_special: BOS/EOS as the tokenizer asks; parse_special:
  /// special tokens written in the text become their ids (added tokens that are not
  /// special always do).
  [[nodiscard]] std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;
  /// The bytes of `ids` (special tokens as their text). SentencePiece drops the leading
  /// space it added when `strip_leading_space`.
  [[nodiscard]] std::string decode(std::span<const int32_t> ids, bool strip_leading_space = true) const;
  /// The bytes of one token.
  [[nodiscard]] std::string piece(int32_t id) const;

  /// The tokenizer as GGUF tokenizer.ggml.* keys (how `synth --tokenizer` embeds a
  /// tokenizer.json). A BPE whose pre-tokenizer matches no known tokenizer.ggml.pre name
  /// is an error: GGUF can only name it. `pad_to` > n_vocab() adds unnamed rows ([PAD<id>],
  /// type unused) up to the model's vocabulary size, as llama.cpp's converter writes them.
  [[nodiscard]] Result<std::vector<std::pair<std::string, MetaValue>>> gguf_metadata(int64_t pad_to = 0) const;

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] int32_t n_vocab() const { return static_cast<int32_t>(tokens_.size()); }
  [[nodiscard]] int32_t bos() const { return bos_; }
  /// Whether encode(..., add_special) starts the text with BOS.
  [[nodiscard]] bool adds_bos() const { return add_bos_ && bos_ >= 0; }
  [[nodiscard]] int32_t eos() const { return eos_; }
  /// True for tokens that end generation (EOS, EOT and similar control tokens).
  [[nodiscard]] bool is_end_of_generation(int32_t id) const;
  /// True for control tokens (markup such as <|im_start|>, never text of an answer).
  [[nodiscard]] bool is_control(int32_t id) const {
    return id >= 0 && id < n_vocab() && types_[static_cast<size_t>(id)] == 3;
  }

 private:
  struct Added {
    std::string text;
    int32_t id;
    bool special;  ///< matched only when parse_special
  };
  void finish();  // index, added-token order
  void encode_text(std::string_view text, bool first_fragment, std::vector<int32_t>& out) const;
  void bpe_word(std::string_view word, std::vector<int32_t>& out) const;
  void spm_text(std::string_view text, std::vector<int32_t>& out) const;
  int32_t byte_token(unsigned char b) const;
  [[nodiscard]] int32_t find(std::string_view text) const;

  Kind kind_ = Kind::bpe;
  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<int32_t> types_;  ///< GGUF token types: 1 normal, 2 unknown, 3 control, 4 user, 6 byte
  // Looked up by string_view without building a std::string.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> index_;
  std::unordered_map<std::string, int32_t> merges_;  ///< "left right" -> rank
  /// (left id << 32 | right id) -> (rank, merged id): the merges in token ids.
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> id_merges_;
  std::vector<Added> added_;
  std::vector<bool> verbatim_;  ///< decoded as their text (added/control tokens)
  PreTokenizer pre_;
  std::string pre_name_;  ///< tokenizer.ggml.pre; empty when a tokenizer.json's regexes match none
  bool nfc_ = false, add_bos_ = false, add_eos_ = false, add_space_prefix_ = false, ignore_merges_ = false;
  int32_t bos_ = -1, eos_ = -1, unk_ = -1;
  std::vector<int32_t> eog_;
};

/// Streaming detokenizer: feed ids as they are generated; it returns only whole UTF-8
/// characters and keeps a split character's first bytes until the rest arrives.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& t) : t_(t) {}
  /// Text that became complete with this token (may be empty).
  std::string push(int32_t id);
  /// Whatever is still held back (an incomplete sequence at the very end), as is.
  std::string flush();

 private:
  const Tokenizer& t_;
  std::string pending_;
};

}  // namespace sy::tok
