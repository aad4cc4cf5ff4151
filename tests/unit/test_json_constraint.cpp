// json_object decoding over a toy vocabulary: the tokens left after mask() are hand-derived
// from RFC 8259 for each state, and a greedy decode whose scripted logits would write invalid
// JSON writes a valid object once masked.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "serving/json_constraint.hpp"

using sy::serving::JsonConstraint;

namespace {

// Token ids are the indices; <eos> ends generation, <|im_start|> is another control token.
const std::vector<std::string> kPieces = {
    "{",           // 0
    "\"",          // 1
    "a",           // 2
    "\":",         // 3
    " 1",          // 4
    "}",           // 5
    "}\n",         // 6
    "<eos>",       // 7
    ",",           // 8
    "\"a\"",       // 9
    " ",           // 10
    "1",           // 11
    "0",           // 12
    "01",          // 13
    "[",           // 14
    "]",           // 15
    "\"\"",        // 16
    "<|im_start|>",  // 17
    "",            // 18: no bytes
    "true",        // 19
    "\\",          // 20
    "\n",          // 21
    "hello world", // 22
    "\xC3\xA9",    // 23: U+00E9 whole
    "\xC3",        // 24: its first byte alone (a byte-fallback token)
    "\xA9",        // 25: its second byte alone
    ":",           // 26
    "Here",        // 27
    "'",           // 28
    "True",        // 29
    "\"b\"",       // 30
    "    ",        // 31: four spaces
};
constexpr int32_t kEos = 7;
const std::vector<uint8_t> kSpecial = [] {
  std::vector<uint8_t> s(kPieces.size(), 0);
  s[7] = s[17] = 1;
  return s;
}();
const std::vector<int32_t> kEnd = {kEos};

JsonConstraint toy() { return JsonConstraint(kPieces, kSpecial, kEnd); }

std::set<int> allowed(const JsonConstraint& c, size_t n = kPieces.size()) {
  std::vector<float> logits(n, 0.5f);
  c.mask(logits);
  std::set<int> out;
  for (size_t id = 0; id < n; ++id) {
    if (std::isfinite(logits[id])) {
      CHECK(logits[id] == 0.5f);  // allowed logits are left as they were
      out.insert(static_cast<int>(id));
    } else {
      CHECK(logits[id] == -INFINITY);
    }
  }
  return out;
}

void accept_all(JsonConstraint& c, std::initializer_list<int32_t> ids) {
  for (int32_t id : ids) REQUIRE(c.accept(id));
}

std::set<int> all_but(std::set<int> excluded) {
  std::set<int> out;
  for (int id = 0; id < static_cast<int>(kPieces.size()); ++id)
    if (!excluded.count(id)) out.insert(id);
  return out;
}

}  // namespace

TEST_CASE("json_object mask leaves exactly the tokens that can continue the object", "[json]") {
  JsonConstraint c = toy();
  // Only '{' or whitespace may start; the end token waits for a complete object.
  CHECK(allowed(c) == std::set<int>{0, 10, 21, 31});
  CHECK_FALSE(c.complete());

  accept_all(c, {0});  // {
  // A key or '}': '":' opens a key that starts with ':', '}\n' closes with a valid newline.
  CHECK(allowed(c) == std::set<int>{1, 3, 5, 6, 9, 10, 16, 21, 30, 31});

  JsonConstraint in_key = c;
  accept_all(in_key, {1});  // {"
  // Inside a key any text goes, except raw newlines, a lone continuation byte and closing
  // quotes followed by anything but ':' ('"a"', '""', '"b"').
  CHECK(allowed(in_key) == all_but({6, 7, 9, 16, 17, 18, 21, 25, 30}));
  accept_all(in_key, {24});  // {"\xC3: only a continuation byte may follow
  CHECK(allowed(in_key) == std::set<int>{25});
  accept_all(in_key, {25, 1, 26, 11, 5});  // {"é":1}
  CHECK(in_key.complete());

  accept_all(c, {9, 26});  // {"a":
  CHECK(allowed(c) == std::set<int>{0, 1, 3, 4, 9, 10, 11, 12, 14, 16, 19, 21, 30, 31});

  accept_all(c, {4});  // {"a": 1
  // The number may grow ("01" makes 101), end, or be followed by whitespace.
  CHECK(allowed(c) == std::set<int>{5, 6, 8, 10, 11, 12, 13, 21, 31});

  JsonConstraint newline = c;
  accept_all(c, {5});  // {"a": 1}
  CHECK(c.complete());
  CHECK(allowed(c) == std::set<int>{kEos});  // once closed, only the end
  accept_all(newline, {6});  // {"a": 1}\n
  CHECK(newline.complete());
  CHECK(allowed(newline) == std::set<int>{kEos});
  CHECK(newline.accept(kEos));
}

TEST_CASE("accept refuses what mask masks and changes nothing then", "[json]") {
  JsonConstraint c = toy();
  for (int32_t id : {5, 7, 17, 18, 1, 27, -1, 32, 1000}) {
    INFO(id);
    CHECK_FALSE(c.accept(id));
  }
  CHECK(allowed(c) == std::set<int>{0, 10, 21, 31});
  // On every state of a walk, mask and accept agree token by token.
  for (int32_t step : {0, 1, 2, 3, 4, 11, 8, 30, 26, 14, 19, 15, 5}) {
    const std::set<int> ok = allowed(c);
    for (int id = 0; id < static_cast<int>(kPieces.size()); ++id) {
      JsonConstraint probe = c;
      CHECK(probe.accept(id) == (ok.count(id) == 1));
    }
    REQUIRE(c.accept(step));
  }
  CHECK(c.complete());  // {"a": 11,"b":[true]}
  c.reset();
  CHECK_FALSE(c.complete());
  CHECK(allowed(c) == std::set<int>{0, 10, 21, 31});
}

TEST_CASE("whitespace runs are capped so a model cannot pad forever", "[json]") {
  JsonConstraint c = toy();
  for (int i = 0; i < 28; ++i) REQUIRE(c.accept(10));
  // 28 spaces so far: four more fit (JsonPrefix::kMaxSpaces is 32).
  CHECK(allowed(c) == std::set<int>{0, 10, 21, 31});
  REQUIRE(c.accept(31));
  CHECK(allowed(c) == std::set<int>{0});
  REQUIRE(c.accept(0));
  CHECK(allowed(c).count(31) == 1);  // '{' ended the run
}

TEST_CASE("padded logits past the vocabulary are masked; ids out of range are ignored", "[json]") {
  std::vector<uint8_t> short_special = {0, 0, 0, 0, 0, 0, 0, 1};  // ids past its end are text
  const std::vector<int32_t> ends = {kEos, 999, -3, kEos};
  JsonConstraint c(kPieces, short_special, ends);
  CHECK(allowed(c, kPieces.size() + 5) == std::set<int>{0, 10, 21, 31});
  accept_all(c, {0, 5});
  CHECK(allowed(c, kPieces.size() + 5) == std::set<int>{kEos});
}

TEST_CASE("requests sharing one JsonVocab keep their own state", "[json]") {
  auto vocab = std::make_shared<const sy::serving::JsonVocab>(kPieces, kSpecial, kEnd);
  JsonConstraint a(vocab), b(vocab);
  accept_all(a, {0, 9, 26, 4, 5});  // {"a": 1}
  CHECK(a.complete());
  CHECK(allowed(a) == std::set<int>{kEos});
  CHECK(allowed(b) == std::set<int>{0, 10, 21, 31});
  CHECK(vocab->is_end(kEos));
  CHECK(vocab->size() == kPieces.size());
}

TEST_CASE("greedy decoding: scripted logits that write invalid JSON write an object when masked", "[json]") {
  // Per step, the model's favourite tokens in order; the first is wrong at every step but
  // one (',') and the last ('<eos>' comes only once the object is closed).
  const std::vector<std::vector<int32_t>> script = {
      {27, 0},     // "Here" before the object
      {28, 9},     // a single-quoted key
      {4, 26},     // a value without ':'
      {13, 4},     // a leading zero
      {kEos, 8},   // ending too early
      {5, 30},     // a trailing comma
      {4, 26},
      {29, 19},    // "True"
      {kEos, 5},
      {10, kEos},  // whitespace after the end
  };
  auto logits_at = [&](size_t step) {
    std::vector<float> logits(kPieces.size());
    for (size_t id = 0; id < logits.size(); ++id) logits[id] = -1.0f - 0.001f * static_cast<float>(id);
    if (step < script.size())
      for (size_t rank = 0; rank < script[step].size(); ++rank)
        logits[script[step][rank]] = 10.0f - static_cast<float>(rank);
    return logits;
  };
  auto argmax = [](const std::vector<float>& v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
  };
  auto decode = [&](JsonConstraint* constraint) {
    std::string text;
    for (size_t step = 0; step < 20; ++step) {
      std::vector<float> logits = logits_at(step);
      if (constraint) {
        constraint->mask(logits);
        CHECK(std::isfinite(logits[kEos]) == constraint->complete());
      }
      const int32_t id = argmax(logits);
      if (id == kEos) return text;
      if (constraint) REQUIRE(constraint->accept(id));
      text += kPieces[id];
    }
    FAIL("no end token in 20 steps");
    return text;
  };
  const std::string free_text = decode(nullptr);
  CHECK(free_text == "Here' 101");
  CHECK_FALSE(nlohmann::json::accept(free_text));

  JsonConstraint c = toy();
  const std::string text = decode(&c);
  CHECK(text == R"({"a": 1,"b":true})");
  const nlohmann::json parsed = nlohmann::json::parse(text);
  CHECK(parsed.is_object());
  CHECK(parsed == nlohmann::json{{"a", 1}, {"b", true}});
}
