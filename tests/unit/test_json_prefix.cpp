// The JSON prefix recognizer against RFC 8259 (expected bytes and positions derived by hand
// from its grammar and from RFC 3629 for UTF-8), against its own documented limits, and
// against nlohmann::json's parser on random documents and mutations of them.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>

#include "serving/json_prefix.hpp"

using sy::serving::JsonPrefix;
using sy::serving::JsonTop;

namespace {

// The index of the first byte refused, or -1 when every byte is accepted.
long first_refused(std::string_view text, JsonTop top = JsonTop::object) {
  JsonPrefix p(top);
  for (size_t i = 0; i < text.size(); ++i)
    if (!p.push(static_cast<uint8_t>(text[i]))) return static_cast<long>(i);
  return -1;
}

bool whole_text(std::string_view text, JsonTop top) {
  JsonPrefix p(top);
  return p.push(text) && p.complete();
}

// nlohmann::json's verdict, the parsed value when valid; nullopt where it refuses a number
// for overflowing a double, a limit of its own that RFC 8259 leaves to implementations.
std::optional<std::optional<nlohmann::json>> reference_parse(const std::string& text) {
  try {
    return std::optional<nlohmann::json>(nlohmann::json::parse(text));
  } catch (const nlohmann::json::parse_error&) {
    return std::optional<nlohmann::json>();
  } catch (const nlohmann::json::out_of_range&) {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("valid objects are accepted byte by byte and complete only at their last byte", "[json]") {
  const std::string docs[] = {
      "{}",
      R"({"a":1})",
      " \t\r\n{ \"a\" : [ 1 , -0.5e+10 , 2E3 , 0 , -0 , 10.25 , 1e-7 , 0E0 , true , false , null ] , "
      "\"b\" : { } , \"c\" : [ ] }",
      R"({"esc":"\"\\\/\b\f\n\r\t\u00e9\u00E9\uD83D\uDE00\udbff\udfff\uD7FF\uE000"})",
      // U+00E9, U+20AC, U+1F600, then the ends of each UTF-8 length and of the ranges
      // around the surrogates: U+0080 U+07FF U+0800 U+D7FF U+E000 U+FFFF U+10000 U+10FFFF.
      "{\"utf8\":\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF"
      "\xEE\x80\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\x7F\"}",
      R"({"a":{"b":{"c":[[[]],[{}],"",[-1.5E-0]]}}})",
      R"({"":"","k":"v","k2":[1,[2,{"x":null}]]})",
  };
  for (const std::string& doc : docs) {
    INFO(doc);
    REQUIRE(nlohmann::json::accept(doc));  // an independent parser agrees they are valid
    JsonPrefix p(JsonTop::object);
    for (size_t i = 0; i < doc.size(); ++i) {
      REQUIRE(p.push(static_cast<uint8_t>(doc[i])));
      CHECK(p.complete() == (i + 1 == doc.size()));
    }
    CHECK(p.closed());
    CHECK(p.depth() == 0);
    CHECK(p.push(" \n"));  // whitespace may follow a closed text
    CHECK(p.complete());
  }
}

TEST_CASE("any top-level value: complete exactly where the grammar allows the text to end", "[json]") {
  struct Case {
    const char* text;
    bool complete;
  };
  const Case cases[] = {
      {"0", true},     {"-", false},   {"-0", true},     {"1.", false},  {"1.5", true},  {"1e", false},
      {"1e+", false},  {"1e+5", true}, {"123", true},    {"\"a", false}, {"\"a\"", true}, {"tru", false},
      {"true", true},  {"[", false},   {"[]", true},     {"12 ", true},  {" null ", true}, {"\"\\", false},
      {"\"\\u00", false},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    JsonPrefix p(JsonTop::any);
    REQUIRE(p.push(c.text));
    CHECK(p.complete() == c.complete);
    CHECK(nlohmann::json::accept(c.text) == c.complete);
  }
  JsonPrefix number(JsonTop::any);
  REQUIRE(number.push("12"));
  CHECK_FALSE(number.closed());  // "123" is still possible
  REQUIRE(number.push(" "));
  CHECK(number.closed());
}

TEST_CASE("invalid texts are refused at the first byte no valid text can have", "[json]") {
  struct Case {
    std::string text;
    long at;
  };
  const Case object_cases[] = {
      {R"({"a":01})", 6},  // leading zero
      {R"({"a":-01})", 7},
      {R"({"a":[1,]})", 8},  // trailing comma
      {R"({"a":1,})", 7},
      {R"({"a" 1})", 5},  // missing colon
      {R"({"a"::1})", 5},
      {R"({"a":1 "b":2})", 7},  // missing comma
      {R"({,})", 1},
      {R"({"a":})", 5},
      {R"({"a":-})", 6},
      {R"({"a":1.})", 7},
      {R"({"a":1.e5})", 7},
      {R"({"a":1e})", 7},
      {R"({"a":1e+})", 8},
      {R"({"a":.5})", 5},
      {R"({"a":+1})", 5},
      {R"({"\x"})", 3},  // bad escape
      {R"({"\u12G4"})", 6},
      {R"({"a":trux})", 8},
      {R"({"a":nul})", 8},
      {R"({"a":True})", 5},
      {R"({"a":[1})", 7},  // mismatched closers
      {R"({"a":1]})", 6},
      {R"({'a':1})", 1},
      {R"({a:1})", 1},
      {"{}x", 2},  // after the top-level value only whitespace
      {"{} {}", 3},
      {"{}}", 2},
      {"[1]", 0},  // json_object: the top level must be an object
      {"\"a\"", 0},
      {" 1", 1},
      {"true", 0},
      {"}", 0},
      {"{\"a\x01\"}", 3},  // control characters must be escaped
      {"{\"a\n\"}", 3},
      {"{\"a\x1F\"}", 3},
      {"{\"\xC3\x28\"}", 3},  // invalid UTF-8: a lead byte without its continuation
      {"{\"\xC0\x80\"}", 2},  // C0, C1, F5-FF never occur
      {"{\"\xC1\xBF\"}", 2},
      {"{\"\xF5\x80\"}", 2},
      {"{\"\xFF\"}", 2},
      {"{\"\x80\"}", 2},  // a continuation byte alone
      {"{\"\xE0\x80\x80\"}", 3},  // overlong
      {"{\"\xF0\x80\x80\x80\"}", 3},
      {"{\"\xED\xA0\x80\"}", 3},  // an encoded surrogate
      {"{\"\xF4\x90\x80\x80\"}", 3},  // above U+10FFFF
      {"{\"\xE2\x82\"}", 4},  // truncated
      {"{\"\xC3\xA9\xA9\"}", 4},
      {R"({"\uDC00"})", 5},  // a low surrogate alone
      {R"({"\uD800"})", 8},  // a high surrogate alone
      {R"({"\uD800\n"})", 9},
      {R"({"\uD800\u0041"})", 10},
      {R"({"\uD800\uD800"})", 11},
  };
  for (const Case& c : object_cases) {
    INFO(c.text);
    CHECK(first_refused(c.text) == c.at);
    CHECK_FALSE((nlohmann::json::accept(c.text) && nlohmann::json::parse(c.text).is_object()));
  }
  const Case any_cases[] = {
      {"[1,]", 3}, {"trux", 3}, {"01", 1}, {"[1}", 2}, {"1 2", 2}, {"\"a\" \"b\"", 4}, {"{\"a\":1]", 6}, {"-a", 1},
  };
  for (const Case& c : any_cases) {
    INFO(c.text);
    CHECK(first_refused(c.text, JsonTop::any) == c.at);
  }
  // An unterminated string is a prefix, not an error; it just is not complete.
  JsonPrefix p(JsonTop::object);
  CHECK(p.push(R"({"abc)"));
  CHECK_FALSE(p.complete());
  CHECK_FALSE(p.failed());
  // A refused byte is final.
  CHECK_FALSE(p.push('\x01'));
  CHECK(p.failed());
  CHECK_FALSE(p.push('"'));
}

TEST_CASE("nesting is capped at kMaxDepth open containers", "[json]") {
  static_assert(JsonPrefix::kMaxDepth == 64);
  const std::string deepest = "{\"a\":" + std::string(63, '[');
  JsonPrefix p(JsonTop::object);
  REQUIRE(p.push(deepest));
  CHECK(p.depth() == 64);
  JsonPrefix deeper = p;
  CHECK_FALSE(deeper.push('['));
  CHECK_FALSE(JsonPrefix(p).push('{'));
  REQUIRE(p.push(std::string(63, ']') + "}"));
  CHECK(p.complete());
  // The stack remembers the kind of every level, the outermost one too.
  JsonPrefix mixed(JsonTop::object);
  REQUIRE(mixed.push("{\"a\":" + std::string(62, '[') + "{\"b\":1}"));
  CHECK_FALSE(JsonPrefix(mixed).push('}'));  // a '[' is open
  CHECK(mixed.push(std::string(62, ']')));
  CHECK_FALSE(JsonPrefix(mixed).push(']'));  // the '{' is open
  CHECK(mixed.push('}'));
  CHECK(mixed.complete());
}

TEST_CASE("at most kMaxSpaces whitespace bytes in a row outside strings", "[json]") {
  static_assert(JsonPrefix::kMaxSpaces == 32);
  const std::string s32(32, ' ');
  CHECK(first_refused(s32 + "{}") == -1);
  CHECK(first_refused(s32 + " {}") == 32);
  CHECK(first_refused("{" + s32 + "}") == -1);
  CHECK(first_refused("{" + s32 + " }") == 33);
  std::string mixed;
  for (int i = 0; i < 8; ++i) mixed += " \t\n\r";
  CHECK(first_refused(mixed + "{}") == -1);
  CHECK(first_refused(mixed + "\n{}") == 32);
  // Any other byte starts a new run; spaces inside strings are text.
  CHECK(first_refused(s32 + "{" + s32 + "\"a\"" + s32 + ":" + s32 + "1" + s32 + "}" + s32) == -1);
  CHECK(first_refused("{\"" + std::string(100, ' ') + "\":1}") == -1);
  CHECK(first_refused("{}" + s32 + " ") == 34);
}

namespace {

// A random valid JSON value (RFC 8259) with random whitespace, strings holding escapes, \u
// escapes with surrogate pairs and raw UTF-8.
std::string random_value(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto ws = [&] {
    static const char* const spaces[] = {"", "", "", " ", "\n", "\t ", "\r\n  "};
    return std::string(spaces[pick(7)]);
  };
  auto str = [&] {
    static const char* const parts[] = {"a", "Z", " ", "\\\"", "\\\\", "\\/", "\\b", "\\n", "\\u00e9", "\\uD83D\\uDE00",
                                        "\\uFFFF", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\x7F", "0"};
    std::string s = "\"";
    for (int n = pick(4); n > 0; --n) s += parts[pick(16)];
    return s + "\"";
  };
  auto number = [&] {
    std::string s = pick(3) == 0 ? "-" : "";
    s += pick(3) == 0 ? std::string("0") : std::to_string(1 + pick(999));
    if (pick(2) == 0) s += "." + std::to_string(pick(100));
    if (pick(3) == 0) {
      s += pick(2) ? "e" : "E";
      s += pick(2) ? "+" : pick(2) ? "-" : "";
      s += std::to_string(pick(20));
    }
    return s;
  };
  const int kind = depth >= 5 ? 2 + pick(5) : pick(7);
  std::string out;
  switch (kind) {
    case 0:
    case 1: {
      const bool object = kind == 0;
      out = object ? "{" : "[";
      for (int n = pick(4), i = 0; i < n; ++i) {
        if (i) out += ",";
        out += ws();
        if (object) out += str() + ws() + ":" + ws();
        out += random_value(rng, depth + 1) + ws();
      }
      return out + (object ? "}" : "]");
    }
    case 2: return str();
    case 3:
    case 4: return number();
    case 5: return pick(2) ? "true" : "false";
    default: return "null";
  }
}

}  // namespace

TEST_CASE("complete texts are exactly those nlohmann::json accepts (random documents and mutations)", "[json]") {
  const std::string alphabet = std::string("{}[],:\" \\/bfnrtu0123456789-+.eEaxDdl\t\n\x01\x7F") +
                               "\xC3\xA9\xE2\x82\xAC\xED\xA0\xF0\x9F\x80\xF4\x90\xC0\xFF";
  std::mt19937 rng(20240611);
  int valid = 0, invalid = 0;
  for (int doc = 0; doc < 3000; ++doc) {
    std::string text = random_value(rng, 0);
    for (int edit = 0; edit < 4; ++edit) {
      INFO(text);
      if (const auto reference = reference_parse(text)) {
        const bool ours = whole_text(text, JsonTop::any);
        REQUIRE(ours == reference->has_value());
        (ours ? valid : invalid)++;
        // Object mode agrees on objects and refuses everything else.
        REQUIRE(whole_text(text, JsonTop::object) == (ours && (*reference)->is_object()));
      }
      if (text.empty()) break;
      const size_t at = rng() % text.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 4) {
        case 0: text.insert(at, 1, c); break;
        case 1: text.erase(at, 1); break;
        case 2: text[at] = c; break;
        default: text.resize(at); break;
      }
    }
  }
  // Both outcomes are well represented, so the agreement means something.
  CHECK(valid > 3000);
  CHECK(invalid > 3000);
}
