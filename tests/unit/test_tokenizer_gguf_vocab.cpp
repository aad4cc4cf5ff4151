// A GGUF vocabulary is untrusted input: malformed byte tokens are refused naming the token
// and the file, special ids outside the vocabulary count as absent (llama.cpp's "bad special
// token" rule, PR #3635), and encode never returns an id outside the vocabulary.
#include <catch2/catch.hpp>

#include <cstdio>

#include "tokenizer/tokenizer.hpp"

using sy::tok::Tokenizer;

namespace {

// A SentencePiece vocabulary: <unk>, <s>, </s>, the byte tokens asked for, then `pieces`.
sy::Metadata spm(const std::vector<std::string>& byte_tokens, const std::vector<std::string>& pieces) {
  sy::MetaArray tokens{sy::MetaType::string, {}}, types{sy::MetaType::i32, {}};
  auto add = [&](const std::string& t, int32_t ty) {
    tokens.items.emplace_back(t);
    types.items.emplace_back(ty);
  };
  add("<unk>", 2);
  add("<s>", 3);
  add("</s>", 3);
  for (const auto& b : byte_tokens) add(b, 6);
  for (const auto& p : pieces) add(p, 1);
  sy::Metadata md;
  md.set("tokenizer.ggml.model", std::string("llama"));
  md.set("tokenizer.ggml.tokens", tokens);
  md.set("tokenizer.ggml.token_type", types);
  return md;
}

std::vector<std::string> all_bytes() {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) {
    char n[8];
    std::snprintf(n, sizeof n, "<0x%02X>", b);
    v.emplace_back(n);
  }
  return v;
}

}  // namespace

TEST_CASE("a malformed byte token is refused naming the token id and the file", "[tokenizer]") {
  // SentencePiece spells byte pieces <0xXX>: two hex digits (sentencepiece's ByteToPiece).
  for (const std::string bad : {"<0xZZ>", "<0x>", "<0x4G>", "<0x-1>", "<0x+A>", "<0x 1>", "<0xABC>", "0x41"}) {
    INFO(bad);
    auto t = Tokenizer::from_gguf(spm({"<0x41>", bad}, {}), "m.gguf");
    REQUIRE_FALSE(t.has_value());
    CHECK(t.status().message() == "m.gguf: token 4 ('" + bad +
                                      "') has token type 6 (byte), but a byte token must be written <0xXX> with two "
                                      "hex digits; the vocabulary is damaged, re-convert the model");
  }
}

TEST_CASE("byte tokens decode to their byte, in either hex case", "[tokenizer]") {
  auto t = Tokenizer::from_gguf(spm({"<0x0A>", "<0xff>", "<0xE2>"}, {}), "m.gguf");
  REQUIRE(t.has_value());
  CHECK((*t)->piece(3) == "\n");
  CHECK((*t)->piece(4) == "\xFF");
  CHECK((*t)->piece(5) == "\xE2");
}

TEST_CASE("special ids outside the vocabulary count as absent", "[tokenizer]") {
  auto md = spm(all_bytes(), {"\xE2\x96\x81" "a"});
  const int64_t n = 3 + 256 + 1;
  md.set("tokenizer.ggml.bos_token_id", uint32_t(n));          // one past the end
  md.set("tokenizer.ggml.eos_token_id", int32_t{-7});
  md.set("tokenizer.ggml.unknown_token_id", uint64_t{1} << 40);
  md.set("tokenizer.ggml.eot_token_id", uint32_t{2});          // in range: kept
  md.set("tokenizer.ggml.add_bos_token", true);
  md.set("tokenizer.ggml.add_eos_token", true);
  auto t = Tokenizer::from_gguf(md, "m.gguf");
  REQUIRE(t.has_value());
  CHECK((*t)->bos() == -1);
  CHECK((*t)->eos() == -1);
  CHECK((*t)->is_end_of_generation(2));
  CHECK((*t)->encode("a", true, false) == std::vector<int32_t>{n - 1});  // no BOS/EOS to add
}

TEST_CASE("encode never returns an id outside the vocabulary", "[tokenizer]") {
  // No byte tokens and no usable <unk>: characters without a piece are dropped, not -1.
  auto md = spm({}, {"\xE2\x96\x81", "a"});
  md.set("tokenizer.ggml.unknown_token_id", uint32_t{999});
  auto t = Tokenizer::from_gguf(md, "m.gguf");
  REQUIRE(t.has_value());
  const auto ids = (*t)->encode("a\xC3\xA9 \xFF" "a", false, false);
  for (int32_t id : ids) CHECK((id >= 0 && id < (*t)->n_vocab()));
  CHECK(ids == std::vector<int32_t>{3, 4, 3, 4});  // "▁" "a" "▁" "a": é and 0xFF have no token
}
