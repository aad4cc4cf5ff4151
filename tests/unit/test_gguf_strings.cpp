// GGUF strings: keys and tensor names must be UTF-8 (refused with the offset and the bad
// byte otherwise), values keep their bytes, and printing escapes what is not UTF-8 exactly
// as Python's bytes.decode("utf-8", "backslashreplace") does.
#include <catch2/catch.hpp>

#include <functional>

#include "gguf_bytes.hpp"
#include "parse.hpp"
#include "switchyard/utf8.hpp"

using sy::test::GgufBytes;

namespace {

// Unicode's Table 3-7 (well-formed UTF-8 byte sequences), transcribed range by range: the
// reference the validator is held to.
bool well_formed_reference(const std::string& s) {
  struct Row {
    unsigned lo, hi;           // first byte
    unsigned lo2, hi2;         // second byte
    int len;
  };
  static const Row rows[] = {
      {0x00, 0x7F, 0, 0, 1},          {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3},
      {0xE1, 0xEC, 0x80, 0xBF, 3},    {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3},
      {0xF0, 0xF0, 0x90, 0xBF, 4},    {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
  };
  size_t i = 0;
  while (i < s.size()) {
    const unsigned b = static_cast<unsigned char>(s[i]);
    const Row* r = nullptr;
    for (const auto& row : rows)
      if (b >= row.lo && b <= row.hi) r = &row;
    if (!r) return false;
    if (i + static_cast<size_t>(r->len) > s.size()) return false;
    for (int k = 1; k < r->len; ++k) {
      const unsigned c = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      const unsigned lo = k == 1 ? r->lo2 : 0x80, hi = k == 1 ? r->hi2 : 0xBF;
      if (c < lo || c > hi) return false;
    }
    i += static_cast<size_t>(r->len);
  }
  return true;
}

std::string bytes(std::initializer_list<unsigned> b) {
  std::string s;
  for (unsigned c : b) s += static_cast<char>(c);
  return s;
}

sy::Result<sy::gguf::File> parse(const GgufBytes& g) { return sy::gguf::parse(std::as_bytes(std::span(g.b)), "f.gguf"); }

}  // namespace

TEST_CASE("the UTF-8 check agrees with Unicode's table of well-formed sequences", "[gguf][utf8]") {
  // Every string of one and two bytes, and every three-byte string that starts with a
  // multi-byte lead (the table's interesting rows), including surrogates and overlong forms.
  for (unsigned a = 0; a < 256; ++a) {
    const std::string one = bytes({a});
    REQUIRE(!sy::first_invalid_utf8(one) == well_formed_reference(one));
    for (unsigned b = 0; b < 256; ++b) {
      const std::string two = bytes({a, b});
      REQUIRE(!sy::first_invalid_utf8(two) == well_formed_reference(two));
    }
  }
  for (unsigned a = 0xC0; a < 0x100; ++a)
    for (unsigned b = 0x70; b < 0xD0; ++b)
      for (unsigned c = 0x70; c < 0xD0; ++c) {
        const std::string three = bytes({a, b, c});
        INFO(std::hex << a << " " << b << " " << c);
        REQUIRE(!sy::first_invalid_utf8(three) == well_formed_reference(three));
      }
  // Four bytes around the U+10FFFF limit and the F0 overlong boundary.
  for (unsigned a : {0xF0u, 0xF1u, 0xF3u, 0xF4u, 0xF5u})
    for (unsigned b = 0x80; b < 0xC0; ++b) {
      const std::string four = bytes({a, b, 0x80, 0xBF});
      REQUIRE(!sy::first_invalid_utf8(four) == well_formed_reference(four));
    }
}

TEST_CASE("escaping writes each byte that is not UTF-8 as \\xNN, as Python's backslashreplace", "[gguf][utf8]") {
  // Right-hand sides printed by Python 3.11: b.decode("utf-8", "backslashreplace").
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain ascii", "plain ascii"},
      {"g\xC3\xA9n\xC3\xA9ral \xE5\x90\x8D \xF0\x9F\x98\x80", "g\xC3\xA9n\xC3\xA9ral \xE5\x90\x8D \xF0\x9F\x98\x80"},
      {"a\xFF" "b", "a\\xffb"},
      {"\xC0\xAF", "\\xc0\\xaf"},                  // overlong '/'
      {"\xED\xA0\x80", "\\xed\\xa0\\x80"},         // a surrogate
      {"\xF4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},  // past U+10FFFF
      {"\xE2\x82", "\\xe2\\x82"},                  // cut short at the end
      {"\xE2\x82" "A", "\\xe2\\x82A"},             // cut short before ASCII
      {"\xF0\x9F\x98", "\\xf0\\x9f\\x98"},
      {"\x80\x80", "\\x80\\x80"},
      {"back\\slash", "back\\slash"},  // backslashes are not escaped, as in Python
      {"\xE0\x80\x80", "\\xe0\\x80\\x80"},
      {"\xF5", "\\xf5"},
      {"ok\xE2\x82\xAC\xFE", "ok\xE2\x82\xAC\\xfe"},
  };
  for (const auto& [in, want] : cases) {
    INFO(want);
    CHECK(sy::escape_invalid_utf8(in) == want);
  }
  CHECK(sy::first_invalid_utf8("ok\xE2\x82\xAC\xFE") == 5u);  // Python's UnicodeDecodeError.start
  CHECK(sy::first_invalid_utf8("a\xFF" "b") == 1u);
  CHECK_FALSE(sy::first_invalid_utf8("g\xC3\xA9n\xC3\xA9ral"));
}

TEST_CASE("a metadata key that is not UTF-8 is refused with its offset and the bad byte", "[gguf][utf8]") {
  GgufBytes g;
  g.header(3, 0, 2).kv_u32("general.alignment", 32);
  const size_t at = g.size();  // the second key's length field
  g.kv_u32("gen\xFFral.x", 1);
  const auto r = parse(g);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.status().code() == sy::StatusCode::corrupt);
  CHECK(at == 24 + 8 + 17 + 4 + 4);
  CHECK(r.status().message() == "f.gguf: metadata key 'gen\\xffral.x' at offset " + std::to_string(at) +
                                    " is not valid UTF-8 (byte 0xff at position 3); GGUF keys must be UTF-8, so the "
                                    "file is damaged or its converter is broken");
}

TEST_CASE("keys: overlong forms, surrogates and code points past U+10FFFF are refused; UTF-8 is read", "[gguf][utf8]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"k\xC0\xAF", "byte 0xc0 at position 1"},
      {"ke\xED\xA0\x80", "byte 0xed at position 2"},
      {"\xF4\x90\x80\x80", "byte 0xf4 at position 0"},
      {"abc\xE2\x82", "byte 0xe2 at position 3"},
  };
  for (const auto& [key, detail] : bad) {
    GgufBytes g;
    g.b.reserve(64);  // GCC 12 warns (stringop-overflow) on the first insert into an empty vector in a loop
    g.header(3, 0, 1).kv_u32(key, 1);
    const auto r = parse(g);
    REQUIRE_FALSE(r.has_value());
    INFO(r.status().message());
    CHECK(r.status().message().find("metadata key '" + sy::escape_invalid_utf8(key) + "' at offset 24 is not valid UTF-8 (" +
                                    detail + ")") != std::string::npos);
  }
  GgufBytes g;
  g.header(3, 0, 1).kv_u32("g\xC3\xA9n\xC3\xA9ral.\xE5\x90\x8D", 7);
  const auto r = parse(g);
  REQUIRE(r.has_value());
  CHECK(r.value().kv[0].first == "g\xC3\xA9n\xC3\xA9ral.\xE5\x90\x8D");
}

TEST_CASE("a tensor name that is not UTF-8 is refused with its offset and the bad byte", "[gguf][utf8]") {
  GgufBytes g;
  g.header(3, 2, 1).kv_str("general.architecture", "llama").tensor("ok", {8}, 0, 0);
  const size_t at = g.size();
  g.tensor("blk.0.\x80weight", {8}, 0, 32).pad().data(64);
  const auto r = parse(g);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.status().message() == "f.gguf: tensor name 'blk.0.\\x80weight' at offset " + std::to_string(at) +
                                    " is not valid UTF-8 (byte 0x80 at position 6); GGUF tensor names must be UTF-8, "
                                    "so the file is damaged or its converter is broken");
}

TEST_CASE("string values that are not UTF-8 keep their bytes", "[gguf][utf8]") {
  const std::string name = "caf\xC3\xA9 \xFF\xFE end", item = "\xC0\xAF";
  GgufBytes g;
  g.header(3, 0, 2).kv_str("general.name", name);
  g.str("tokenizer.ggml.tokens").u32(GgufBytes::ARRAY).u32(GgufBytes::STRING).u64(2).str("a").str(item);
  const auto r = parse(g);
  REQUIRE(r.has_value());
  CHECK(std::get<std::string>(r.value().kv[0].second) == name);
  CHECK(std::get<std::string>(std::get<sy::MetaArray>(r.value().kv[1].second).items[1]) == item);
}

TEST_CASE("messages quoting a name escape control characters and stay UTF-8", "[gguf][utf8]") {
  GgufBytes g;
  g.header(3, 0, 2).kv_u32("a\nb", 1).kv_u32("a\nb", 2);
  const auto r = parse(g);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.status().message() == "f.gguf: duplicate metadata key 'a\\x0ab'");
  // A long non-ASCII name is cut between characters, never inside one.
  std::string long_key;
  for (int i = 0; i < 60; ++i) long_key += "\xC3\xA9";  // 120 bytes of 'é'
  GgufBytes h;
  h.header(3, 0, 2).kv_u32(long_key, 1).kv_u32(long_key, 2);
  const auto q = parse(h);
  REQUIRE_FALSE(q.has_value());
  CHECK_FALSE(sy::first_invalid_utf8(q.status().message()));
  std::string want;
  for (int i = 0; i < 40; ++i) want += "\xC3\xA9";
  CHECK(q.status().message() == "f.gguf: duplicate metadata key '" + want + "...'");
}
