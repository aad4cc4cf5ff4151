// Streaming: what is held back and when it is released, and that the streamed events add
// up to the whole-output parse however the text is cut (every byte position, inside UTF-8
// characters too, and one byte at a time).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "server/parse/stream_parser.hpp"

using namespace sy::server;

namespace {

struct Sample {
  const char* what;
  ToolFormat format;
  bool opened;
  std::string text;
};

ParseOptions opts(const Sample& s) {
  ParseOptions o;
  o.tool_format = s.format;
  o.prompt_opens_reasoning = s.opened;
  o.tool_call_id_prefix = "call_x_";
  o.tools = nlohmann::json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {
      "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}}}])");
  return o;
}

// Well-formed UTF-8 (checked here independently of the parser's own rules).
bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// Adjacent text events of one kind joined: the order of kinds must not depend on the cuts.
std::vector<ParseEvent> merged(const std::vector<ParseEvent>& events) {
  std::vector<ParseEvent> out;
  for (const auto& e : events) {
    const bool text = e.kind == EventKind::content || e.kind == EventKind::reasoning;
    if (text && !out.empty() && out.back().kind == e.kind) out.back().text += e.text;
    else out.push_back(e);
  }
  return out;
}

std::vector<ParseEvent> stream(const Sample& s, const std::vector<size_t>& cuts) {
  OutputParser p(opts(s));
  std::vector<ParseEvent> events;
  size_t from = 0;
  auto add = [&](std::vector<ParseEvent> more) { events.insert(events.end(), more.begin(), more.end()); };
  for (const size_t cut : cuts) {
    add(p.push(std::string_view(s.text).substr(from, cut - from)));
    from = cut;
  }
  add(p.push(std::string_view(s.text).substr(from)));
  add(p.finish());
  return events;
}

const std::vector<Sample>& samples() {
  static const std::vector<Sample> all = {
      {"hermes, thinking, text and two calls", ToolFormat::hermes, false,
       "<think>\nPlan: café ☕ then 東京.\n</think>\n\nChecking… 😀\n<tool_call>\n{\"name\": \"f\", \"arguments\": "
       "{\"s\": \"naïve 😀 \\u00e9\", \"n\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n"
       "</tool_call>\nDone ✓\n"},
      {"hermes, malformed then good", ToolFormat::hermes, false,
       "Ünïcode <tool_call>{\"name\": \"f\", \"arguments\": {\"n\": 1,}}</tool_call> <tool_ <tool_call>"
       "{\"name\": \"f\", \"arguments\": {\"n\": 2}}</tool_call> tail <tool_call>{\"name\": \"h\""},
      {"qwen3_coder after forced thinking", ToolFormat::qwen3_coder, true,
       "Think ✓\n\n</think>\n\nWriting 東京.\n<tool_call>\n<function=f>\n<parameter=s>\n42\n</parameter>\n"
       "<parameter=n>\n7\n</parameter>\n<parameter=x>\nnot json ☕\n</parameter>\n</function>\n</tool_call>"
       "<tool_call>\n<function=f>\n<parameter=s>\nbroken"},
      {"llama3_json", ToolFormat::llama3_json, false,
       "  {\"name\": \"f\", \"parameters\": {\"s\": \"é\"}}"},
      {"llama3_json prose", ToolFormat::llama3_json, false, "{ not json } but ☕ <|python_tag|>{\"name\": \"f\"}"},
      {"mistral both forms", ToolFormat::mistral, false,
       "Ok ☕[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"n\": 1}}][TOOL_CALLS]g[CALL_ID]abc123XYZ[ARGS]{\"é\": "
       "[1, 2.5e3]}[TOOL_CALLS] words"},
      {"granite", ToolFormat::granite, false, "<|tool_call|>[{\"name\": \"f\", \"arguments\": {\"n\": 3}}]"},
      {"glm45", ToolFormat::glm45, false,
       "<think>思考</think>\n<tool_call>f\n<arg_key>n</arg_key>\n<arg_value>5</arg_value>\n<arg_key>s</arg_key>\n"
       "<arg_value>5</arg_value>\n</tool_call>"},
      {"kimi_k2", ToolFormat::kimi_k2, false,
       "Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"n\": 1}"
       "<|tool_call_end|><|tool_calls_section_end|>"},
      {"deepseek", ToolFormat::deepseek, true,
       "推理\n</think>Answer<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"n\": 1}<｜tool▁call▁end｜>"
       "<｜tool▁call▁begin｜>function<｜tool▁sep｜>g\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
      {"reasoning never closed", ToolFormat::hermes, true, "still ☕ thinking\n\n</thi"},
      {"harmony", ToolFormat::harmony, false,
       "<|channel|>analysis<|message|>Need weather ☕.<|end|><|start|>assistant<|channel|>commentary to=functions.f "
       "<|constrain|>json<|message|>{\"n\": 1}<|call|><|start|>assistant<|channel|>commentary to=functions.f "
       "<|constrain|>json<|message|>{broken<|call|><|start|>assistant<|channel|>final<|message|>東京 <|end|>!"},
  };
  return all;
}

}  // namespace

TEST_CASE("streamed events add up to the whole-output parse at every cut", "[toolparse]") {
  for (const auto& s : samples()) {
    INFO(s.what);
    const ParsedOutput whole = parse_output(s.text, opts(s));
    const auto reference = merged(stream(s, {}));
    for (size_t cut = 1; cut < s.text.size(); ++cut) {
      INFO("cut at byte " << cut);
      const auto events = stream(s, {cut});
      ParsedOutput folded;
      for (const auto& e : events) {
        apply_event(folded, e);
        if (e.kind == EventKind::content || e.kind == EventKind::reasoning) {
          CHECK_FALSE(e.text.empty());
          CHECK(valid_utf8(e.text));
        }
      }
      REQUIRE(folded == whole);
      REQUIRE(merged(events) == reference);
    }
    std::vector<size_t> every_byte;
    for (size_t i = 1; i < s.text.size(); ++i) every_byte.push_back(i);
    ParsedOutput folded;
    for (const auto& e : stream(s, every_byte)) apply_event(folded, e);
    CHECK(folded == whole);
  }
}

TEST_CASE("the samples parse to what their templates mean", "[toolparse]") {
  // Hand-derived results for some of the streaming samples, so that the equality above is
  // an equality with the right answer.
  const auto& all = samples();
  const auto hermes = parse_output(all[0].text, opts(all[0]));
  CHECK(hermes.reasoning_content == "Plan: café ☕ then 東京.");
  CHECK(hermes.content == "Checking… 😀Done ✓\n");
  REQUIRE(hermes.tool_calls.size() == 2);
  CHECK(hermes.tool_calls[0] == ToolCall{"call_x_0", "f", R"({"s":"naïve 😀 é","n":1})"});
  CHECK(hermes.tool_calls[1] == ToolCall{"call_x_1", "g", "{}"});

  const auto bad = parse_output(all[1].text, opts(all[1]));
  CHECK(bad.content ==
        "Ünïcode <tool_call>{\"name\": \"f\", \"arguments\": {\"n\": 1,}}</tool_call> <tool_tail <tool_call>{\"name\": \"h\"");
  REQUIRE(bad.tool_calls.size() == 1);
  CHECK(bad.tool_calls[0].arguments == R"({"n":2})");

  const auto coder = parse_output(all[2].text, opts(all[2]));
  CHECK(coder.reasoning_content == "Think ✓");
  CHECK(coder.content == "Writing 東京.<tool_call>\n<function=f>\n<parameter=s>\nbroken");
  REQUIRE(coder.tool_calls.size() == 1);
  CHECK(coder.tool_calls[0].arguments == R"({"s":"42","n":7,"x":"not json ☕"})");

  const auto mistral = parse_output(all[5].text, opts(all[5]));
  CHECK(mistral.content == "Ok ☕[TOOL_CALLS] words");
  REQUIRE(mistral.tool_calls.size() == 2);
  CHECK(mistral.tool_calls[1].name == "g");
  CHECK(mistral.tool_calls[1].arguments == R"({"é":[1,2500.0]})");

  const auto glm = parse_output(all[7].text, opts(all[7]));
  CHECK(glm.reasoning_content == "思考");
  REQUIRE(glm.tool_calls.size() == 1);
  CHECK(glm.tool_calls[0].arguments == R"({"n":5,"s":"5"})");

  const auto ds = parse_output(all[9].text, opts(all[9]));
  CHECK(ds.reasoning_content == "推理");
  CHECK(ds.content == "Answer");
  REQUIRE(ds.tool_calls.size() == 2);
  CHECK(ds.tool_calls[1] == ToolCall{"call_x_1", "g", "{}"});

  const auto harmony = parse_output(all[11].text, opts(all[11]));
  CHECK(harmony.reasoning_content == "Need weather ☕.");
  CHECK(harmony.content == "{broken東京 !");  // the malformed call's arguments, the final message, raw text
  REQUIRE(harmony.tool_calls.size() == 1);
  CHECK(harmony.tool_calls[0] == ToolCall{"call_x_0", "f", R"({"n":1})"});
}

TEST_CASE("a possible tag is held back until it is decided", "[toolparse]") {
  ParseOptions o;
  o.tool_call_id_prefix = "call_7_";
  OutputParser p(o);
  auto e = p.push("Hello <tool_");
  REQUIRE(e.size() == 1);
  CHECK(e[0] == ParseEvent{EventKind::content, "Hello", 0, "", ""});  // " <tool_" may still be a call
  e = p.push("call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1,");
  CHECK(e.empty());
  e = p.push(" 2]}}\n</tool_call>");
  REQUIRE(e.size() == 2);
  CHECK(e[0] == ParseEvent{EventKind::tool_call_start, "", 0, "call_7_0", "f"});
  CHECK(e[1] == ParseEvent{EventKind::tool_call_arguments, R"({"a":[1,2]})", 0, "", ""});
  e = p.push("\nBye <t");  // whitespace after a call is the template's separator
  REQUIRE(e.size() == 1);
  CHECK(e[0].text == "Bye");
  e = p.push(">caf\xC3");
  REQUIRE(e.size() == 1);
  CHECK(e[0].text == " <t>caf");  // "<t>" cannot become "<tool_call>"; half an é waits
  e = p.finish();
  REQUIRE(e.size() == 1);
  CHECK(e[0].text == "\xC3");  // the stream ended inside the character: it is not lost
}

TEST_CASE("a block that turns out not to be a call is released as soon as that is known", "[toolparse]") {
  OutputParser p(ParseOptions{});
  CHECK(p.push("<tool_call>\n{\"name\"").empty());
  const auto e = p.push(": oops");
  REQUIRE(e.size() == 1);
  CHECK(e[0].text == "<tool_call>\n{\"name\": oops");
  ParseOptions llama;
  llama.tool_format = ToolFormat::llama3_json;
  OutputParser q(llama);
  CHECK(q.push("{").empty());
  const auto f = q.push(" I am prose");
  REQUIRE(f.size() == 1);
  CHECK(f[0].text == "{ I am prose");
}
