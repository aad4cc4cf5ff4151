// <think> blocks: opened by the output or by the prompt, closed or not, and the newlines the
// templates put around the tags (Qwen3 writes "<think>\n" + reasoning + "\n</think>\n\n").
#include <catch2/catch.hpp>

#include "server/parse/reasoning.hpp"
#include "server/parse/stream_parser.hpp"

using namespace sy::server;

namespace {

ParsedOutput parse(std::string_view text, bool opened = false, bool reasoning = true) {
  ParseOptions o;
  o.prompt_opens_reasoning = opened;
  o.parse_reasoning = reasoning;
  return parse_output(text, o);
}

}  // namespace

TEST_CASE("reasoning is split off the start of the output", "[toolparse]") {
  auto r = parse("<think>\nThe capital of France is Paris.\n</think>\n\nParis.");
  CHECK(r.reasoning_content == "The capital of France is Paris.");
  CHECK(r.content == "Paris.");
  r = parse("\n<think>x</think>y");  // whitespace before the tag (GLM starts with a newline)
  CHECK(r.reasoning_content == "x");
  CHECK(r.content == "y");
  r = parse("<think>\n\n</think>\n\nHi");  // the empty block of enable_thinking=false
  CHECK(r.reasoning_content.empty());
  CHECK(r.content == "Hi");
  r = parse("<think>a\n\nb</think>b</think>c");  // inner newlines stay; a later </think> is content
  CHECK(r.reasoning_content == "a\n\nb");
  CHECK(r.content == "b</think>c");
}

TEST_CASE("without an opening tag at the start there is no reasoning", "[toolparse]") {
  auto r = parse("Hello <think> x </think>");
  CHECK(r.reasoning_content.empty());
  CHECK(r.content == "Hello <think> x </think>");
  r = parse("\n\nHi\n");
  CHECK(r.content == "\n\nHi\n");
  r = parse("<thinking>no</thinking>");
  CHECK(r.content == "<thinking>no</thinking>");
  r = parse("<think>a</think>b", false, false);  // reasoning parsing off
  CHECK(r.reasoning_content.empty());
  CHECK(r.content == "<think>a</think>b");
}

TEST_CASE("a prompt that ends in <think> starts the output inside the reasoning", "[toolparse]") {
  // Qwen3.5 and DeepSeek-V3.1 (thinking) end their generation prompts so; QwQ and the R1
  // distill close the block again ("<think>\n</think>") when enable_thinking is unset.
  CHECK(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n"));
  CHECK(prompt_opens_reasoning("<｜Assistant｜><think>"));
  CHECK_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n</think>"));
  CHECK_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n"));
  auto r = parse("Let me think.\n</think>\n\nThe answer is 4.", true);
  CHECK(r.reasoning_content == "Let me think.");
  CHECK(r.content == "The answer is 4.");
  r = parse("\nStill thinking when the output ended\n", true);  // never closed: all reasoning
  CHECK(r.reasoning_content == "Still thinking when the output ended\n");
  CHECK(r.content.empty());
}

TEST_CASE("the splitter holds back only what a tag or its newlines may still need", "[toolparse]") {
  ReasoningSplitter s(true, true);
  std::string reasoning, answer;
  s.push("\nabc\n", reasoning, answer);
  CHECK(reasoning == "abc");  // the leading newline is the template's, the trailing one may precede </think>
  s.push("def\n</th", reasoning, answer);
  CHECK(reasoning == "abc\ndef");
  CHECK(s.in_reasoning());
  s.push("ink>\n\nHi", reasoning, answer);
  CHECK(reasoning == "abc\ndef");
  CHECK(answer == "Hi");
  CHECK_FALSE(s.in_reasoning());

  ReasoningSplitter t(true, false);
  reasoning.clear();
  answer.clear();
  t.push("  <thi", reasoning, answer);
  CHECK(answer.empty());
  t.push("s is not a tag", reasoning, answer);
  CHECK(answer == "  <this is not a tag");
}
