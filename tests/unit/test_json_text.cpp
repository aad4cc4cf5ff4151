// Every --json output prints through cli::json_text: strings that are not UTF-8 come out with
// each invalid byte as \xNN, as Python's bytes.decode("utf-8", "backslashreplace") writes it,
// and the result is always valid JSON.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli/json_text.hpp"

using sy::cli::json_text;

TEST_CASE("json_text escapes invalid UTF-8 in keys and values as Python's backslashreplace", "[cli][utf8]") {
  nlohmann::json j;
  j["k\xff"] = {"a\xc3\xa9\xe2\x82", "\\xff ok"};
  j["n"] = 1;
  j["t"] = "caf\xc3\xa9 \xed\xa0\x80";  // a UTF-16 surrogate encoded in UTF-8 is not UTF-8
  // Python 3.11: br = lambda b: b.decode("utf-8", "backslashreplace");
  // json.dumps({br(b"k\xff"): [br(b"a\xc3\xa9\xe2\x82"), br(b"\\xff ok")], "n": 1,
  //             "t": br(b"caf\xc3\xa9 \xed\xa0\x80")}, sort_keys=True, separators=(",", ":"),
  //            ensure_ascii=False)
  const std::string python = "{\"k\\\\xff\":[\"a\xc3\xa9\\\\xe2\\\\x82\",\"\\\\xff ok\"],\"n\":1,\"t\":\"caf\xc3\xa9 \\\\xed\\\\xa0\\\\x80\"}";
  const std::string text = json_text(j);
  CHECK(text == python);
  CHECK(nlohmann::json::accept(text));
}

TEST_CASE("json_text leaves UTF-8 text and key order alone", "[cli][utf8]") {
  nlohmann::ordered_json j;
  j["z"] = "caf\xc3\xa9 \xf0\x9f\x98\x80 \\x41";
  j["a"] = nlohmann::ordered_json::array({1, 2.5, nullptr, true});
  CHECK(json_text(j) == j.dump());
  CHECK(json_text(j, 2) == j.dump(2));
  // The escaped copy keeps the insertion order of ordered_json too.
  j["z"] = "\xff";
  CHECK(json_text(j) == "{\"z\":\"\\\\xff\",\"a\":[1,2.5,null,true]}");
}
