// libFuzzer target for the tokenizer on arbitrary text. Three small vocabularies are built
// once in code; every input is encoded with each, decoded, and streamed. Never a crash, ids
// always inside the vocabulary, and the round trips the vocabularies allow
// (docs/tokenizers.md, "Round trips"):
//   - byte-level BPE with all 256 byte tokens: decode(encode(x)) == x for any bytes, with
//     and without special-token parsing;
//   - SentencePiece with all 256 byte tokens and add_space_prefix: for valid UTF-8 x,
//     decode(encode(x)) == x with each U+2581 (the space marker) read as a space;
//   - byte-level BPE with an NFC normalizer: for valid UTF-8 x, decode(encode(x)) == nfc(x);
//   - StreamDecoder: its chunks plus flush() equal decode(ids) without the space strip.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "switchyard/utf8.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/unicode.hpp"

namespace {

using sy::tok::Tokenizer;

const char* const kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// GPT-2's alphabet (every byte a token), a few merges, a special and a plain added token.
std::unique_ptr<Tokenizer> byte_level(bool nfc) {
  nlohmann::json vocab = nlohmann::json::object();
  const auto& alpha = sy::tok::byte_to_unicode();
  for (int b = 0; b < 256; ++b) vocab[alpha[static_cast<size_t>(b)]] = b;
  nlohmann::json merges = nlohmann::json::array();
  int next = 256;
  const std::string sp = alpha[' '];
  for (const auto& [l, r] : std::initializer_list<std::pair<std::string, std::string>>{
           {sp, "t"}, {"h", "e"}, {sp + "t", "he"}, {"i", "n"}, {sp, "a"}, {"e", "r"}, {alpha[0xC3], alpha[0xA9]},
           {"c", "a"}, {"ca", "f"}, {sp, "w"}, {"o", "r"}, {sp + "w", "or"}}) {
    merges.push_back(l + " " + r);
    if (!vocab.contains(l + r)) vocab[l + r] = next++;
  }
  nlohmann::json j;
  j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
  j["added_tokens"] = nlohmann::json::array({{{"id", next}, {"content", "<|im_start|>"}, {"special", true}},
                                             {{"id", next + 1}, {"content", "<tool>"}, {"special", false}}});
  if (nfc) j["normalizer"] = {{"type", "NFC"}};
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         nlohmann::json::array({{{"type", "Split"}, {"pattern", {{"Regex", kQwen2}}}},
                                                {{"type", "ByteLevel"}, {"use_regex", false}}})}};
  auto t = Tokenizer::from_hf_text(j.dump(), std::nullopt, "bpe.json", "none");
  if (!t) __builtin_trap();
  return std::move(*t);
}

// SentencePiece: <unk>, <s>, </s>, the 256 byte tokens, and pieces with scores.
std::unique_ptr<Tokenizer> sentencepiece() {
  sy::MetaArray tokens{sy::MetaType::string, {}}, scores{sy::MetaType::f32, {}}, types{sy::MetaType::i32, {}};
  auto add = [&](std::string text, float score, int32_t type) {
    tokens.items.emplace_back(std::move(text));
    scores.items.emplace_back(score);
    types.items.emplace_back(type);
  };
  add("<unk>", 0, 2);
  add("<s>", 0, 3);
  add("</s>", 0, 3);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 0, 6);
  }
  const std::string u = "\xE2\x96\x81";  // ▁
  float s = -1;
  for (const std::string& p : std::initializer_list<std::string>{u, u + "t", "he", u + "the", "e", "t", "h", u + "a", "in", u + "in", "\xC3\xA9",
                               "caf", "caf\xC3\xA9", u + "caf\xC3\xA9", u + u, "12", u + "1"})
    add(p, s--, 1);
  sy::Metadata md;
  md.set("tokenizer.ggml.model", std::string("llama"));
  md.set("tokenizer.ggml.tokens", tokens);
  md.set("tokenizer.ggml.scores", scores);
  md.set("tokenizer.ggml.token_type", types);
  md.set("tokenizer.ggml.unknown_token_id", uint32_t{0});
  md.set("tokenizer.ggml.bos_token_id", uint32_t{1});
  md.set("tokenizer.ggml.eos_token_id", uint32_t{2});
  auto t = Tokenizer::from_gguf(md, "spm");
  if (!t) __builtin_trap();
  return std::move(*t);
}

std::string spaces_for_markers(std::string_view x) {
  std::string out;
  for (size_t i = 0; i < x.size();) {
    if (x.substr(i, 3) == "\xE2\x96\x81") {
      out += ' ';
      i += 3;
    } else {
      out += x[i++];
    }
  }
  return out;
}

// Encodes and decodes `x`; returns the decoded text after the checks every tokenizer passes.
std::string round_trip(const Tokenizer& t, std::string_view x, bool special) {
  const auto ids = t.encode(x, special, special);
  for (int32_t id : ids)
    if (id < 0 || id >= t.n_vocab()) __builtin_trap();
  sy::tok::StreamDecoder stream(t);
  std::string streamed;
  for (int32_t id : ids) streamed += stream.push(id);
  streamed += stream.flush();
  if (streamed != t.decode(ids, false)) __builtin_trap();
  return t.decode(ids);
}

}  // namespace

// Only the first 1 KiB of an input is used. Every step is linear in the text, but under
// ASan + UBSan + coverage a 64 KiB input costs seconds, and ctest's fixed-run replay must
// stay short; what length alone does is measured by switchyard-bench-tokenizer.
constexpr size_t kMaxText = 1024;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size = std::min(size, kMaxText);
  static const auto bpe = byte_level(false);
  static const auto bpe_nfc = byte_level(true);
  static const auto spm = sentencepiece();
  const std::string_view x(reinterpret_cast<const char*>(data), size);
  const bool utf8 = !sy::first_invalid_utf8(x);

  if (round_trip(*bpe, x, false) != x) __builtin_trap();
  if (round_trip(*bpe, x, true) != x) __builtin_trap();
  const std::string n = round_trip(*bpe_nfc, x, false);
  if (utf8 && n != sy::tok::nfc(x)) __builtin_trap();
  const std::string s = round_trip(*spm, x, false);
  if (utf8 && s != spaces_for_markers(x)) __builtin_trap();
  (void)round_trip(*spm, x, true);
  return 0;
}
