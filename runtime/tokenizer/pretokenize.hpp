// Pre-tokenisation: a sequence of regular expressions (PCRE2, UTF + Unicode properties,
// JIT-compiled) that cut text into words before BPE. Each expression is applied to every
// piece the previous one produced; both the matches and the text between them become
// pieces (Hugging Face's Split with "Isolated", llama.cpp's regex split).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/status.hpp"

namespace sy::tok {

class PreTokenizer {
 public:
  /// Compiles the expressions; a bad one is an error quoting it and PCRE2's reason.
  static Result<PreTokenizer> create(const std::vector<std::string>& patterns);
  /// The expressions llama.cpp uses for a GGUF `tokenizer.ggml.pre` value; an unknown
  /// name is an error listing the known ones.
  static Result<std::vector<std::string>> patterns_for(std::string_view pre);
  /// The `tokenizer.ggml.pre` name whose expressions are exactly `patterns` ("" if none).
  static std::string name_for(const std::vector<std::string>& patterns);

  PreTokenizer();
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  /// Cuts `text` into pieces (views into `text`).
  [[nodiscard]] std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sy::tok
