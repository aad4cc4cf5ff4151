// tokenizer.json is untrusted input: ids, added tokens and pre-tokenizer nesting are checked
// before use, and each failure is one sentence naming the file.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/unicode.hpp"

using sy::tok::Tokenizer;
using nlohmann::json;

namespace {

sy::Result<std::unique_ptr<Tokenizer>> load(const json& j) {
  return Tokenizer::from_hf_text(j.dump(), std::nullopt, "t.json", "c.json");
}

// GPT-2's byte alphabet as the vocabulary: every byte is a token.
json byte_vocab() {
  json v = json::object();
  for (int b = 0; b < 256; ++b) v[sy::tok::byte_to_unicode()[static_cast<size_t>(b)]] = b;
  return v;
}

json bpe(json vocab) { return {{"model", {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", json::array()}}}}; }

}  // namespace

TEST_CASE("tokenizer.json ids that are not whole numbers in range are refused", "[tokenizer]") {
  const std::vector<std::pair<json, std::string>> cases = {
      {-1, "-1"}, {1e30, "1e+30"}, {3, "3"}, {2.5, "2.5"}, {"1", "\"1\""}, {uint64_t{1} << 40, "1099511627776"}};
  for (const auto& [id, shown] : cases) {
    INFO(shown);
    auto t = load(bpe({{"a", 0}, {"b", 1}, {"c", id}}));
    REQUIRE_FALSE(t.has_value());
    CHECK(t.status().message() == "t.json: vocab token 'c' has id " + shown +
                                      ", but ids must be whole numbers from 0 to 2 (one per vocab and added-token entry)");
  }
  auto j = bpe({{"a", 0}});
  j["added_tokens"] = json::array({{{"id", -5}, {"content", "<s>"}}});
  auto t = load(j);
  REQUIRE_FALSE(t.has_value());
  CHECK(t.status().message() ==
        "t.json: an added token has id -5, but ids must be whole numbers from 0 to 1 (one per vocab and added-token entry)");
}

TEST_CASE("an empty added token is ignored instead of matching forever", "[tokenizer]") {
  auto j = bpe(byte_vocab());
  j["added_tokens"] = json::array({{{"id", 256}, {"content", ""}, {"special", false}}});
  auto t = load(j);
  REQUIRE(t.has_value());
  CHECK((*t)->encode("ab", false, true) == std::vector<int32_t>{'a', 'b'});  // printable bytes keep their code point
}

TEST_CASE("pre-tokenizer Sequences nested beyond 16 are refused", "[tokenizer]") {
  auto j = bpe(byte_vocab());
  json p = {{"type", "ByteLevel"}};
  for (int i = 0; i < 40; ++i) p = {{"type", "Sequence"}, {"pretokenizers", json::array({p})}};
  j["pre_tokenizer"] = p;
  auto t = load(j);
  REQUIRE_FALSE(t.has_value());
  CHECK(t.status().message() == "t.json: the pre_tokenizer nests Sequences more than 16 deep");
}

TEST_CASE("an empty vocabulary and a directory are refused with a sentence", "[tokenizer]") {
  auto t = load(bpe(json::object()));
  REQUIRE_FALSE(t.has_value());
  CHECK(t.status().message() == "t.json: model.vocab must be a non-empty object mapping each token to its id");
  sy::test::TempDir dir;
  auto d = Tokenizer::from_hf(dir.path());
  REQUIRE_FALSE(d.has_value());
  CHECK(d.status().message() == "the tokenizer file '" + dir.path().string() + "' is a directory; give a file inside it");
  // A directory where the optional tokenizer_config.json belongs is an error too, not "absent".
  sy::test::write_file(dir / "tokenizer.json", bpe(byte_vocab()).dump());
  std::filesystem::create_directory(dir / "tokenizer_config.json");
  d = Tokenizer::from_hf(dir / "tokenizer.json");
  REQUIRE_FALSE(d.has_value());
  CHECK(d.status().message() == "the tokenizer config '" + (dir / "tokenizer_config.json").string() +
                                    "' is a directory; give a file inside it");
}

TEST_CASE("byte-level BPE round-trips every byte string through its 256 byte tokens", "[tokenizer]") {
  // GPT-2's byte alphabet is a bijection on bytes, so decode(encode(x)) == x for any x.
  auto j = bpe(byte_vocab());
  j["pre_tokenizer"] = {{"type", "ByteLevel"}};
  auto t = load(j);
  REQUIRE(t.has_value());
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  for (const std::string& x : {all, std::string("\xE2\x82 \xFF\xFE caf\xC3\xA9"), std::string()}) {
    const auto ids = (*t)->encode(x, false, false);
    CHECK((*t)->decode(ids) == x);
  }
}
