#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pretokenize.hpp"

#include <pcre2.h>

#include <algorithm>
#include <map>

#include "switchyard/utf8.hpp"
#include "tokenizer/unicode.hpp"

namespace sy::tok {
namespace {

// The expressions llama.cpp applies for each `tokenizer.ggml.pre` (llama-vocab.cpp), which
// reproduce the Hugging Face tokenizers of those models.
const std::string kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
const std::string kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kCjk = "[一-龥ࠀ-一가-퟿]+";

const std::map<std::string, std::vector<std::string>, std::less<>>& table() {
  static const std::map<std::string, std::vector<std::string>, std::less<>> t = [] {
    std::map<std::string, std::vector<std::string>, std::less<>> m;
    const std::vector<std::string> dflt{R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
    const std::vector<std::string> starcoder{R"(\p{N})", kGpt2};
    m["default"] = dflt;
    for (const char* n : {"gpt2", "gpt-2", "mpt", "olmo", "jais"}) m[n] = {kGpt2};
    for (const char* n : {"llama3", "llama-bpe", "llama-v3", "dbrx", "smaug-bpe"}) m[n] = {kLlama3};
    for (const char* n : {"qwen2", "stablelm2", "qwen35"}) m[n] = {kQwen2};
    for (const char* n : {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone"}) m[n] = starcoder;
    m["falcon"] = {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"};
    m["deepseek-coder"] = {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"};
    // Letters as DeepSeek's tokenizer lists them; the code points that Unicode
    // normalisation would change are escaped so no editor can alter them.
    m["deepseek-llm"] = {
        "[\r\n]",
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\\x{1F7D}"
        "ᾀ-ᾴᾶ-ᾼ\\x{1FBE}ῂ-ῄῆ-ῌῐ-\\x{1FD3}ῖ-\\x{1FDB}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\\x{2126}ℨ\\x{212A}-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-"
        "𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        kCjk,
        R"(\p{N}+)",
    };
    return m;
  }();
  return t;
}

size_t utf8_step(std::string_view s, size_t i) {
  return std::min(utf8_len(static_cast<unsigned char>(s[i])), s.size() - i);
}

struct Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() {
    if (code) pcre2_code_free(code);
  }
};

}  // namespace

struct PreTokenizer::Impl {
  std::vector<std::unique_ptr<Compiled>> res;
};

PreTokenizer::PreTokenizer() : impl_(std::make_unique<Impl>()) {}
PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

Result<std::vector<std::string>> PreTokenizer::patterns_for(std::string_view pre) {
  const auto it = table().find(pre.empty() ? std::string_view("default") : pre);
  if (it != table().end()) return it->second;
  std::string names;
  for (const auto& [k, v] : table()) names += (names.empty() ? "" : ", ") + k;
  return error::unsupported("tokenizer.ggml.pre '" + escape_invalid_utf8(pre) + "' is not a pre-tokenizer this build knows (" +
                            names + ")");
}

std::string PreTokenizer::name_for(const std::vector<std::string>& patterns) {
  // llama.cpp's tables spell the case-insensitive contractions of Hugging Face's
  // regexes out letter by letter; compare in that spelling.
  std::vector<std::string> spelled = patterns;
  const std::string hf = "(?i:'s|'t|'re|'ve|'m|'ll|'d)", ours = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
  for (auto& p : spelled)
    if (const size_t at = p.find(hf); at != std::string::npos) p.replace(at, hf.size(), ours);
  for (const auto& [k, v] : table())
    if (v == spelled && k != "default") return std::string(k);
  return {};
}

Result<PreTokenizer> PreTokenizer::create(const std::vector<std::string>& patterns) {
  PreTokenizer p;
  for (const auto& pat : patterns) {
    int err = 0;
    PCRE2_SIZE at = 0;
    auto c = std::make_unique<Compiled>();
    c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat.data()), pat.size(), PCRE2_UTF | PCRE2_UCP, &err, &at,
                            nullptr);
    if (!c->code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      return error::invalid_argument("pre-tokenizer pattern " + escape_invalid_utf8(pat) + " does not compile at offset " +
                                     std::to_string(at) + ": " + reinterpret_cast<const char*>(msg));
    }
    pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);  // the interpreter remains when JIT is unavailable
    p.impl_->res.push_back(std::move(c));
  }
  return p;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces{text};
  if (text.empty()) return {};
  // PCRE2 validates the whole subject on every call unless told not to, which makes a
  // long text quadratic: check once here instead. (Invalid UTF-8 keeps the checks, so
  // matching stops and the rest stays one piece.)
  // PCRE2's own check may be skipped only for strict UTF-8 (no overlong forms, surrogates
  // or code points past U+10FFFF), which is what first_invalid_utf8 checks.
  const uint32_t opts = !first_invalid_utf8(text) ? PCRE2_NO_UTF_CHECK : 0;
  for (const auto& re : impl_->res) {
    std::vector<std::string_view> next;
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(re->code, nullptr);
    for (std::string_view piece : pieces) {
      size_t start = 0, pos = 0;
      while (pos < piece.size()) {
        const int rc = pcre2_match(re->code, reinterpret_cast<PCRE2_SPTR>(piece.data()), piece.size(), pos, opts, md, nullptr);
        if (rc < 0) break;  // no further match (or invalid UTF-8: keep the rest whole)
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        if (ov[1] == ov[0]) {  // empty match: step one character
          pos = ov[0] + utf8_step(piece, ov[0]);
          continue;
        }
        if (ov[0] > start) next.push_back(piece.substr(start, ov[0] - start));
        next.push_back(piece.substr(ov[0], ov[1] - ov[0]));
        start = pos = ov[1];
      }
      if (start < piece.size()) next.push_back(piece.substr(start));
    }
    pcre2_match_data_free(md);
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace sy::tok
