// The pieces under the output parser: the JSON end finder, UTF-8 hold-back, format
// detection, tool call ids and the typing of text-written parameter values.
#include <catch2/catch.hpp>

#include <string>

#include "server/parse/json_scan.hpp"
#include "server/parse/param_types.hpp"
#include "server/parse/tool_call_id.hpp"
#include "server/parse/tool_formats.hpp"
#include "server/parse/utf8_hold.hpp"

using namespace sy::server;

namespace {

// Feeds `text`; returns the state and how many bytes were fed when it stopped being `more`.
std::pair<JsonScanner::State, size_t> scan(std::string_view text) {
  JsonScanner s;
  for (size_t i = 0; i < text.size(); ++i)
    if (s.feed(text[i]) != JsonScanner::State::more) return {s.state(), i + 1};
  return {s.state(), text.size()};
}

}  // namespace

TEST_CASE("the JSON scanner ends a value at its closing bracket and refuses non-JSON at once", "[toolparse]") {
  using S = JsonScanner::State;
  const std::string doc = R"(  {"a": [1, -2.5e+3, 0, true, null, "x\"\u00e9\\"], "b": {}})";
  CHECK(scan(doc + "</tool_call>") == std::pair{S::done, doc.size()});
  CHECK(scan(R"([[], {}, 0.5E-2])").first == S::done);
  CHECK(scan(R"({"a": [1, 2)").first == S::more);
  CHECK(scan(R"({"a": "unfinished \u00)").first == S::more);
  CHECK(scan("-").first == S::invalid);                        // only objects and arrays
  CHECK(scan(R"( "a string \" too" )") == std::pair{S::done, size_t{18}});
  CHECK(scan("12").first == S::invalid);  // a number has no closing byte
  CHECK(scan("{'a': 1}") == std::pair{S::invalid, size_t{2}});  // single quotes: the 2nd byte
  CHECK(scan(R"({"a" 1})").first == S::invalid);
  CHECK(scan("[01]") == std::pair{S::invalid, size_t{3}});
  CHECK(scan("[1.]").first == S::invalid);
  CHECK(scan("[1,]").first == S::invalid);
  CHECK(scan(R"({"a": tru})").first == S::invalid);
  CHECK(scan("{\"a\": \"tab\tinside\"}").first == S::invalid);  // raw control character
  CHECK(scan(R"(["\q"])").first == S::invalid);
  CHECK(scan("{ this is prose }") == std::pair{S::invalid, size_t{3}});
  CHECK(scan(std::string(600, '[')).first == S::invalid);  // nesting beyond 512
}

TEST_CASE("an unfinished UTF-8 character is held back, bytes that are not UTF-8 are not", "[toolparse]") {
  const std::string euro = "\xE2\x82\xAC";            // U+20AC, 3 bytes
  const std::string smile = "\xF0\x9F\x98\x80";       // U+1F600, 4 bytes
  CHECK(utf8_complete_length("a" + euro.substr(0, 1)) == 1);
  CHECK(utf8_complete_length("a" + euro.substr(0, 2)) == 1);
  CHECK(utf8_complete_length("a" + euro) == 4);
  CHECK(utf8_complete_length(smile.substr(0, 3)) == 0);
  CHECK(utf8_complete_length(smile) == 4);
  CHECK(utf8_complete_length("\xFF") == 1);          // never a lead byte
  CHECK(utf8_complete_length("ab\x80\x80\x80\x80") == 6);  // stray continuation bytes
  Utf8Hold h;
  CHECK(h.take("caf\xC3") == "caf");
  CHECK(h.take("\xA9 ") == "\xC3\xA9 ");
  CHECK(h.take(smile.substr(0, 2)).empty());
  CHECK(h.flush() == smile.substr(0, 2));
}

TEST_CASE("the tool-call format is read from the markers a template writes", "[toolparse]") {
  // Excerpts of the templates' own text (Qwen3, Qwen3-Coder, Llama 3.2, Mistral, GLM-4.6, Kimi-K2,
  // DeepSeek-V3.1, Granite 3.3), each enough to decide.
  CHECK(detect_tool_format(R"({{- '<tool_call>\n{"name": "' }})") == ToolFormat::hermes);
  CHECK(detect_tool_format(R"({{- '\n<tool_call>\n<function=' + tool_call.name + '>\n' }}{{- '<parameter=' + args_name + '>\n' }})") ==
        ToolFormat::qwen3_coder);
  CHECK(detect_tool_format(R"({{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}{{- '"parameters": ' }})") ==
        ToolFormat::llama3_json);
  CHECK(detect_tool_format(R"({{- "<|python_tag|>" + tool_call.name + ".call(" }})") == ToolFormat::llama3_json);
  CHECK(detect_tool_format(R"({{- "[TOOL_CALLS][" }})") == ToolFormat::mistral);
  CHECK(detect_tool_format(R"({{ '\n<tool_call>' + tc.name }}<arg_key>{{ k }}</arg_key>)") == ToolFormat::glm45);
  CHECK(detect_tool_format("<|tool_calls_section_begin|><|tool_call_begin|>{{ formatted_id }}") == ToolFormat::kimi_k2);
  CHECK(detect_tool_format("{{'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>'+ tool['function']['name']}}") ==
        ToolFormat::deepseek);
  CHECK(detect_tool_format("respond only with <|tool_call|> followed by a JSON list") == ToolFormat::granite);
  CHECK(detect_tool_format(R"({{- "<|start|>assistant<|channel|>final<|message|>" + message.content + "<|end|>" }})") ==
        ToolFormat::harmony);
  CHECK(detect_tool_format("{% for m in messages %}{{ m.content }}{% endfor %}") == ToolFormat::hermes);
  for (const auto f : {ToolFormat::hermes, ToolFormat::qwen3_coder, ToolFormat::llama3_json, ToolFormat::mistral,
                       ToolFormat::granite, ToolFormat::glm45, ToolFormat::kimi_k2, ToolFormat::deepseek,
                       ToolFormat::harmony})
    CHECK(tool_format_from_name(tool_format_name(f)) == f);
  CHECK(tool_format_name(ToolFormat::qwen3_coder) == "qwen3_coder");
  CHECK_FALSE(tool_format_from_name("qwen3-coder").has_value());
}

TEST_CASE("tool call ids are the prefix and a counter, or 9 base-62 digits of a hash for Mistral", "[toolparse]") {
  // The published FNV-1a 64-bit test vectors.
  CHECK(fnv1a64("") == 0xcbf29ce484222325ULL);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ULL);
  CHECK(tool_call_id(ToolFormat::hermes, "call_req7_", 0) == "call_req7_0");
  CHECK(tool_call_id(ToolFormat::qwen3_coder, "call_req7_", 12) == "call_req7_12");
  // fnv1a64("call_req7_0") in base 62, most significant digit first (computed independently).
  CHECK(tool_call_id(ToolFormat::mistral, "call_req7_", 0) == "RvMLYSx1E");
  CHECK(tool_call_id(ToolFormat::mistral, "call_req7_", 1) == "Rvfhilgwl");
}

TEST_CASE("text-written parameter values take the type the schema declares", "[toolparse]") {
  const auto tools = nlohmann::json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {
      "type": "object", "properties": {
        "s": {"type": "string"}, "i": {"type": "integer"}, "b": {"type": "boolean"},
        "n": {"type": ["string", "null"]}, "e": {"enum": ["a", "b"]}, "o": {"type": "object"}}}}},
      {"name": "bare", "parameters": {"properties": {"x": {"type": "number"}}}}])");
  using T = std::vector<std::string>;
  CHECK(declared_types(tools, "f", "s") == T{"string"});
  CHECK(declared_types(tools, "f", "n") == T{"string", "null"});
  CHECK(declared_types(tools, "f", "e") == T{"string"});
  CHECK(declared_types(tools, "bare", "x") == T{"number"});  // a tool without the "function" wrapper
  CHECK(declared_types(tools, "f", "missing").empty());
  CHECK(declared_types(tools, "g", "s").empty());
  CHECK(declared_types(nullptr, "f", "s").empty());

  using J = nlohmann::ordered_json;
  const bool py = true;  // values printed with Python's str(), as Qwen3-Coder's template does
  CHECK(typed_value("123", {"string"}, py) == J("123"));
  CHECK(typed_value("123", {"integer"}, py) == J(123));
  CHECK(typed_value("123", {}, py) == J(123));        // no schema: valid JSON is JSON
  CHECK(typed_value("Paris", {}, py) == J("Paris"));  // no schema: anything else a string
  CHECK(typed_value("True", {"boolean"}, py) == J(true));
  CHECK(typed_value("false", {"boolean"}, py) == J(false));
  CHECK(typed_value("True", {}, py) == J(true));
  CHECK(typed_value("None", {}, py) == J(nullptr));
  CHECK(typed_value("True", {"string"}, py) == J("True"));  // declared a string: stays one
  CHECK(typed_value("True", {}, false) == J("True"));       // GLM writes booleans as JSON
  CHECK(typed_value("None", {"string", "null"}, py) == J(nullptr));
  CHECK(typed_value("null", {"string", "null"}, false) == J(nullptr));
  CHECK(typed_value("none", {"string", "null"}, py) == J("none"));
  CHECK(typed_value("2.5", {"integer"}, py) == J(2.5));  // does not fit: the JSON value it is
  CHECK(typed_value("abc", {"integer"}, py) == J("abc"));
  CHECK(typed_value(R"({"k": [1]})", {"object"}, py) == J::parse(R"({"k": [1]})"));
  CHECK(typed_value(R"({"k": [1]})", {"string"}, py) == J(R"({"k": [1]})"));
  CHECK(typed_value(" 7 ", {"number", "string"}, py) == J(7));
}
