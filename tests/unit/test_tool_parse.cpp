// Tool calls in whole outputs, one format at a time. Each output is written the way the
// model's chat template writes an assistant tool call (the templates in shared/templates),
// and the expected arguments are the same object as compact JSON, written by hand.
#include <catch2/catch.hpp>

#include "server/parse/stream_parser.hpp"

using namespace sy::server;

namespace {

ParseOptions opts(ToolFormat f, std::string prefix = "call_r1_") {
  ParseOptions o;
  o.tool_format = f;
  o.tool_call_id_prefix = std::move(prefix);
  return o;
}

const std::string kWeatherArgs = R"({"location":"Paris, France","unit":"celsius"})";

}  // namespace

TEST_CASE("hermes / Qwen: one call, several calls, text before them", "[toolparse]") {
  const auto one = parse_output(
      "<tool_call>\n{\"name\": \"get_current_weather\", \"arguments\": {\"location\": \"Paris, France\", \"unit\": "
      "\"celsius\"}}\n</tool_call>",
      opts(ToolFormat::hermes));
  CHECK(one.content.empty());
  CHECK(one.reasoning_content.empty());
  REQUIRE(one.tool_calls.size() == 1);
  CHECK(one.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", kWeatherArgs});

  const auto two = parse_output(
      "Let me check both.\n<tool_call>\n{\"name\": \"get_current_weather\", \"arguments\": {\"location\": \"Paris\"}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"get_current_weather\", \"arguments\": {\"location\": \"東京\"}}\n"
      "</tool_call>",
      opts(ToolFormat::hermes));
  CHECK(two.content == "Let me check both.");  // the newline before <tool_call> is the template's separator
  REQUIRE(two.tool_calls.size() == 2);
  CHECK(two.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", R"({"location":"Paris"})"});
  CHECK(two.tool_calls[1] == ToolCall{"call_r1_1", "get_current_weather", R"({"location":"東京"})"});

  // Arguments given as a JSON string holding the object, "parameters" instead of "arguments",
  // no arguments at all, and the closing tag cut off by the end of the output.
  const auto odd = parse_output(
      "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 1}\"}</tool_call>"
      "<tool_call>{\"name\": \"b\", \"parameters\": {\"y\": [true, null]}}</tool_call>"
      "<tool_call>{\"name\": \"c\"}</tool_call>"
      "<tool_call>\n{\"name\": \"d\", \"arguments\": {}}\n</tool_",
      opts(ToolFormat::hermes, "id"));
  CHECK(odd.content.empty());
  REQUIRE(odd.tool_calls.size() == 4);
  CHECK(odd.tool_calls[0] == ToolCall{"id0", "a", R"({"x":1})"});
  CHECK(odd.tool_calls[1] == ToolCall{"id1", "b", R"({"y":[true,null]})"});
  CHECK(odd.tool_calls[2] == ToolCall{"id2", "c", "{}"});
  CHECK(odd.tool_calls[3] == ToolCall{"id3", "d", "{}"});
}

TEST_CASE("hermes: a block that is not a call stays content, byte for byte", "[toolparse]") {
  for (const std::string& text : {
           std::string("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1,}}\n</tool_call>"),  // trailing comma
           std::string("Sure.\n<tool_call>\n{\"name\": \"f\", \"argu"),  // cut off
           std::string("<tool_call>\n{\"arguments\": {}}\n</tool_call>"),  // no name
           std::string("<tool_call>\n{\"name\": \"f\", \"arguments\": [1]}\n</tool_call>"),  // not an object
           std::string("<tool_call>\n{\"name\": \"f\"} trailing words\n</tool_call>"),
           std::string("Use the <tool_call> tag like <tool_call>this</tool_call>."),
       }) {
    const auto r = parse_output(text, opts(ToolFormat::hermes));
    CHECK(r.content == text);
    CHECK(r.tool_calls.empty());
  }
  // A good call after a bad one is still found.
  const auto mixed = parse_output(
      "<tool_call>{bad}</tool_call> then <tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>",
      opts(ToolFormat::hermes));
  CHECK(mixed.content == "<tool_call>{bad}</tool_call> then");
  REQUIRE(mixed.tool_calls.size() == 1);
  CHECK(mixed.tool_calls[0].name == "g");
}

TEST_CASE("tool_choice none: nothing is parsed as a call", "[toolparse]") {
  CHECK_FALSE(parses_tool_calls("none"));
  CHECK(parses_tool_calls("auto"));
  CHECK(parses_tool_calls("required"));
  CHECK(parses_tool_calls(nullptr));
  CHECK(parses_tool_calls(nlohmann::json::parse(R"({"type": "function", "function": {"name": "f"}})")));
  const std::string text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  auto o = opts(ToolFormat::hermes);
  o.parse_tool_calls = parses_tool_calls("none");
  const auto r = parse_output(text, o);
  CHECK(r.content == text);
  CHECK(r.tool_calls.empty());
}

TEST_CASE("qwen3_coder / Qwen3.5: parameters as text, typed by the request's schema", "[toolparse]") {
  // As Qwen3.5's template writes a call after its thinking (the prompt ended with "<think>\n").
  auto o = opts(ToolFormat::qwen3_coder);
  o.prompt_opens_reasoning = true;
  const auto r = parse_output(
      "The user asks about Paris.\n</think>\n\n<tool_call>\n<function=get_current_weather>\n<parameter=location>\n"
      "Paris, France\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>",
      o);
  CHECK(r.reasoning_content == "The user asks about Paris.");
  CHECK(r.content.empty());
  REQUIRE(r.tool_calls.size() == 1);
  CHECK(r.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", kWeatherArgs});

  const std::string call =
      "I will write it.\n<tool_call>\n<function=write_file>\n<parameter=path>\n123\n</parameter>\n"
      "<parameter=count>\n42\n</parameter>\n<parameter=overwrite>\nTrue\n</parameter>\n"
      "<parameter=tags>\n[\"a\", \"b\"]\n</parameter>\n<parameter=options>\n{\"mode\": \"fast\"}\n</parameter>\n"
      "<parameter=content>\nline1\n\n  line3\n</parameter>\n</function>\n</tool_call>";
  auto typed = opts(ToolFormat::qwen3_coder);
  typed.tools = nlohmann::json::parse(R"([{"type": "function", "function": {"name": "write_file", "parameters": {
      "type": "object", "properties": {"path": {"type": "string"}, "count": {"type": "integer"},
      "overwrite": {"type": "boolean"}, "tags": {"type": "array"}, "options": {"type": "object"},
      "content": {"type": "string"}}}}}])");
  const auto with_schema = parse_output(call, typed);
  CHECK(with_schema.content == "I will write it.");
  REQUIRE(with_schema.tool_calls.size() == 1);
  CHECK(with_schema.tool_calls[0].arguments ==
        R"({"path":"123","count":42,"overwrite":true,"tags":["a","b"],"options":{"mode":"fast"},"content":"line1\n\n  line3"})");
  // Without a schema, text that is JSON is JSON, Python's True is true, the rest is a string.
  const auto without = parse_output(call, opts(ToolFormat::qwen3_coder));
  REQUIRE(without.tool_calls.size() == 1);
  CHECK(without.tool_calls[0].arguments ==
        R"({"path":123,"count":42,"overwrite":true,"tags":["a","b"],"options":{"mode":"fast"},"content":"line1\n\n  line3"})");

  const auto no_params =
      parse_output("<tool_call>\n<function=get_time>\n</function>\n</tool_call>", opts(ToolFormat::qwen3_coder));
  REQUIRE(no_params.tool_calls.size() == 1);
  CHECK(no_params.tool_calls[0] == ToolCall{"call_r1_0", "get_time", "{}"});
}

TEST_CASE("qwen3_coder: malformed blocks stay content", "[toolparse]") {
  for (const std::string& text : {
           std::string("<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>"),  // no </function>
           std::string("<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>"),  // no </parameter>
           std::string("<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"),  // hermes JSON
           std::string("<tool_call>\n<function=has space>\n</function>\n</tool_call>"),
           std::string("<tool_call>\n<function=f>\n</function>\nextra\n</tool_call>"),
       }) {
    const auto r = parse_output(text, opts(ToolFormat::qwen3_coder));
    CHECK(r.content == text);
    CHECK(r.tool_calls.empty());
  }
}

TEST_CASE("llama3_json: a JSON call as the whole answer, or after <|python_tag|>", "[toolparse]") {
  const std::string call = R"({"name": "get_current_weather", "parameters": {"location": "Paris, France", "unit": "celsius"}})";
  for (const std::string& text : {call, "\n\n" + call, "<|python_tag|>" + call}) {
    const auto r = parse_output(text, opts(ToolFormat::llama3_json));
    CHECK(r.content.empty());
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", kWeatherArgs});
  }
  // Llama 3.1's built-in tools, as its template writes them.
  const auto builtin = parse_output("<|python_tag|>brave_search.call(query=\"Tour de France leader\", n=\"3\")",
                                    opts(ToolFormat::llama3_json));
  CHECK(builtin.content.empty());
  REQUIRE(builtin.tool_calls.size() == 1);
  CHECK(builtin.tool_calls[0] == ToolCall{"call_r1_0", "brave_search", R"({"query":"Tour de France leader","n":"3"})"});
  CHECK(parse_output("<|python_tag|>wolfram_alpha.call()", opts(ToolFormat::llama3_json)).tool_calls.size() == 1);
  for (const std::string& text : {std::string(R"({"answer": 42})"), std::string("{ this is prose }"),
                                 std::string("Here: ") + call, std::string("<|python_tag|>brave_search.call(query=x)"),
                                 std::string("<|python_tag|>import math\nprint(math.pi)")}) {
    const auto r = parse_output(text, opts(ToolFormat::llama3_json));
    CHECK(r.content == text);
    CHECK(r.tool_calls.empty());
  }
}

TEST_CASE("mistral: Nemo's JSON array and Small 3.2's NAME[ARGS]", "[toolparse]") {
  const auto nemo = parse_output(
      R"([TOOL_CALLS][{"name": "get_current_weather", "arguments": {"location": "Paris, France", "unit": "celsius"}, "id": "call00001"}, {"name": "get_time", "arguments": {}}])",
      opts(ToolFormat::mistral, "call_req7_"));
  CHECK(nemo.content.empty());
  REQUIRE(nemo.tool_calls.size() == 2);
  // Ids that Mistral's template accepts back: 9 alphanumerics (see the id test).
  CHECK(nemo.tool_calls[0] == ToolCall{"RvMLYSx1E", "get_current_weather", kWeatherArgs});
  CHECK(nemo.tool_calls[1] == ToolCall{"Rvfhilgwl", "get_time", "{}"});

  const auto small = parse_output(
      R"([TOOL_CALLS]get_current_weather[ARGS]{"location": "Paris, France", "unit": "celsius"}[TOOL_CALLS]get_time[CALL_ID]call00002[ARGS]{})"
      R"([TOOL_CALLS]f[CALL_ID]идßé中1234[ARGS]"{\"a\": 1}")",
      opts(ToolFormat::mistral));
  CHECK(small.content.empty());
  REQUIRE(small.tool_calls.size() == 3);
  CHECK(small.tool_calls[2].arguments == R"({"a":1})");  // any id; arguments the template wrote as a string
  CHECK(small.tool_calls[0].name == "get_current_weather");
  CHECK(small.tool_calls[0].arguments == kWeatherArgs);
  CHECK(small.tool_calls[1].name == "get_time");
  CHECK(small.tool_calls[1].arguments == "{}");

  for (const std::string& text : {std::string("[TOOL_CALLS] is the token"), std::string("[TOOL_CALLS]f[ARGS][1]"),
                                 std::string("[TOOL_CALLS]f[ARGS]{\"a\": "), std::string("[TOOL_CALLS][]")}) {
    const auto r = parse_output(text, opts(ToolFormat::mistral));
    CHECK(r.content == text);
    CHECK(r.tool_calls.empty());
  }
}

TEST_CASE("granite: <|tool_call|> and a JSON list", "[toolparse]") {
  const auto r = parse_output(
      R"(<|tool_call|>[{"arguments": {"location": "Paris, France"}, "name": "get_current_weather"}])",
      opts(ToolFormat::granite));
  CHECK(r.content.empty());
  REQUIRE(r.tool_calls.size() == 1);
  CHECK(r.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", R"({"location":"Paris, France"})"});
}

TEST_CASE("glm45: NAME and arg_key / arg_value pairs", "[toolparse]") {
  auto o = opts(ToolFormat::glm45);
  o.tools = nlohmann::json::parse(
      R"([{"type": "function", "function": {"name": "get_forecast", "parameters": {"properties": {"location": {"type": "string"}, "days": {"type": "integer"}}}}}])");
  // As GLM-4.6 writes it: thinking first, then the call on its own line.
  const auto r = parse_output(
      "\n<think>Checking the forecast.</think>\n<tool_call>get_forecast\n<arg_key>location</arg_key>\n"
      "<arg_value>Paris, France</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
      o);
  CHECK(r.reasoning_content == "Checking the forecast.");
  CHECK(r.content.empty());
  REQUIRE(r.tool_calls.size() == 1);
  CHECK(r.tool_calls[0] == ToolCall{"call_r1_0", "get_forecast", R"({"location":"Paris, France","days":3})"});
  const std::string bad = "<tool_call>get_forecast\n<arg_key>days</arg_key>\n</tool_call>";
  CHECK(parse_output(bad, o).content == bad);
}

TEST_CASE("kimi_k2: calls in a section of special tokens", "[toolparse]") {
  const auto r = parse_output(
      "I'll check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_current_weather:0"
      "<|tool_call_argument_begin|>{\"location\": \"Paris, France\", \"unit\": \"celsius\"}<|tool_call_end|>"
      "<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
      "<|tool_calls_section_end|>",
      opts(ToolFormat::kimi_k2));
  CHECK(r.content == "I'll check.");
  REQUIRE(r.tool_calls.size() == 2);
  CHECK(r.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", kWeatherArgs});
  CHECK(r.tool_calls[1] == ToolCall{"call_r1_1", "get_time", "{}"});
}

TEST_CASE("deepseek: V3.1's NAME<sep>JSON and R1's fenced JSON", "[toolparse]") {
  const auto v31 = parse_output(
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_current_weather<｜tool▁sep｜>{\"location\": \"Paris, France\", "
      "\"unit\": \"celsius\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
      opts(ToolFormat::deepseek));
  CHECK(v31.content.empty());
  REQUIRE(v31.tool_calls.size() == 1);
  CHECK(v31.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", kWeatherArgs});

  const auto r1 = parse_output(
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_weather\n```json\n"
      "{\"location\": \"Paris, France\", \"unit\": \"celsius\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
      opts(ToolFormat::deepseek));
  REQUIRE(r1.tool_calls.size() == 1);
  CHECK(r1.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", kWeatherArgs});

  const std::string bad = "<｜tool▁call▁begin｜>get_current_weather<｜tool▁sep｜>{oops}<｜tool▁call▁end｜>";
  CHECK(parse_output(bad, opts(ToolFormat::deepseek)).content == bad);
}

TEST_CASE("harmony (gpt-oss): analysis is reasoning, final is content, functions.NAME is a call", "[toolparse]") {
  const auto o = opts(ToolFormat::harmony);
  // The model writes the recipient after the channel; the template writes it before.
  for (const std::string& header : {std::string("<|channel|>commentary to=functions.get_current_weather <|constrain|>json"),
                                   std::string(" to=functions.get_current_weather<|channel|>commentary json")}) {
    const auto r = parse_output("<|channel|>analysis<|message|>User wants the weather.<|end|><|start|>assistant" + header +
                                    "<|message|>{\"location\": \"Paris, France\", \"unit\": \"celsius\"}<|call|>",
                                o);
    CHECK(r.reasoning_content == "User wants the weather.");
    CHECK(r.content.empty());
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0] == ToolCall{"call_r1_0", "get_current_weather", kWeatherArgs});
  }
  // The engine may stop on <|call|> or <|return|> without writing them.
  const auto cut = parse_output("<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}", o);
  REQUIRE(cut.tool_calls.size() == 1);
  CHECK(cut.tool_calls[0].name == "get_time");
  const auto answer =
      parse_output("<|channel|>analysis<|message|>2+2=4<|end|><|start|>assistant<|channel|>final<|message|>It is 4.", o);
  CHECK(answer.reasoning_content == "2+2=4");
  CHECK(answer.content == "It is 4.");
  CHECK(answer.tool_calls.empty());
  const auto bad = parse_output("<|channel|>commentary to=functions.f <|constrain|>json<|message|>{oops<|call|>", o);
  CHECK(bad.content == "{oops");  // the arguments are kept; the header is not text
  CHECK(bad.tool_calls.empty());
  CHECK(parse_output("Plain text: special tokens were not decoded.", o).content ==
        "Plain text: special tokens were not decoded.");
}
