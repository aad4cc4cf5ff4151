// The output parsers against the real chat templates: the format each template teaches is
// detected from its text, whether its generation prompt leaves <think> open, and the tool
// calls that Python's Jinja2 wrote into the assistant turns of the shared vectors parse
// back into the calls of the conversation.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "server/parse/stream_parser.hpp"

namespace fs = std::filesystem;
using namespace sy::server;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Read off each template by hand.
const std::map<std::string, ToolFormat>& expected_formats() {
  static const std::map<std::string, ToolFormat> m = {
      {"Qwen-Qwen3-0.6B.jinja", ToolFormat::hermes},
      {"qwen3-tokenizer-config.jinja", ToolFormat::hermes},
      {"Qwen-QwQ-32B.jinja", ToolFormat::hermes},
      {"Qwen-Qwen2.5-7B-Instruct.jinja", ToolFormat::hermes},
      {"NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", ToolFormat::hermes},
      {"Qwen3-Coder.jinja", ToolFormat::qwen3_coder},
      {"Qwen3.5-4B.jinja", ToolFormat::qwen3_coder},
      {"meta-llama-Llama-3.1-8B-Instruct.jinja", ToolFormat::llama3_json},
      {"meta-llama-Llama-3.2-3B-Instruct.jinja", ToolFormat::llama3_json},
      {"meta-llama-Llama-3.3-70B-Instruct.jinja", ToolFormat::llama3_json},
      {"mistralai-Mistral-Nemo-Instruct-2407.jinja", ToolFormat::mistral},
      {"Mistral-Small-3.2-24B-Instruct-2506.jinja", ToolFormat::mistral},
      {"ibm-granite-granite-3.3-2B-Instruct.jinja", ToolFormat::granite},
      {"GLM-4.6.jinja", ToolFormat::glm45},
      {"Kimi-K2-Instruct.jinja", ToolFormat::kimi_k2},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", ToolFormat::deepseek},
      {"deepseek-ai-DeepSeek-V3.1.jinja", ToolFormat::deepseek},
      {"openai-gpt-oss-120b.jinja", ToolFormat::harmony},
      // No tool-call syntax in these: the hermes fallback.
      {"HuggingFaceTB-SmolLM3-3B.jinja", ToolFormat::hermes},
      {"google-gemma-2-2b-it.jinja", ToolFormat::hermes},
      {"microsoft-Phi-3.5-mini-instruct.jinja", ToolFormat::hermes},
  };
  return m;
}

// The pieces of a rendered conversation that the model would have generated in its
// assistant turns: from `open` to the first of `closes` (a turn with no end is skipped).
std::vector<std::string> turns(const std::string& text, const std::string& open, const std::vector<std::string>& closes,
                               bool keep_open) {
  std::vector<std::string> out;
  for (size_t at = text.find(open); at != std::string::npos;) {
    const size_t from = keep_open ? at : at + open.size();
    size_t end = std::string::npos;
    for (const auto& c : closes) end = std::min(end, text.find(c, from));
    if (end == std::string::npos) break;
    out.push_back(text.substr(from, end - from));
    at = text.find(open, end);
  }
  return out;
}

std::vector<std::string> assistant_turns(const std::string& tmpl, const std::string& text) {
  if (tmpl.starts_with("meta-llama"))
    return turns(text, "<|start_header_id|>assistant<|end_header_id|>\n\n", {"<|eot_id|>", "<|eom_id|>"}, false);
  if (tmpl.starts_with("mistral") || tmpl.starts_with("Mistral")) return turns(text, "[TOOL_CALLS]", {"</s>"}, true);
  if (tmpl.starts_with("deepseek")) return turns(text, "<｜tool▁calls▁begin｜>", {"<｜tool▁calls▁end｜>"}, true);
  if (tmpl.starts_with("openai-gpt-oss"))
    return turns(text, "<|start|>assistant", {"<|end|>", "<|call|>", "<|return|>"}, false);
  if (tmpl.starts_with("GLM"))
    return turns(text, "<|assistant|>", {"<|observation|>", "<|user|>", "<|system|>", "<|assistant|>"}, false);
  return turns(text, "<|im_start|>assistant", {"<|im_end|>"}, false);
}

// The conversation's calls as (name, arguments object), in order; `first_only`: the
// template writes only the first call of each message (gpt-oss).
std::vector<std::pair<std::string, nlohmann::json>> conversation_calls(const nlohmann::json& messages, bool first_only) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (const auto& m : messages) {
    if (!m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
    for (const auto& tc : m["tool_calls"]) {
      const auto& f = tc.contains("function") ? tc["function"] : tc;
      nlohmann::json args = f.value("arguments", nlohmann::json::object());
      if (args.is_string()) args = nlohmann::json::parse(args.get<std::string>());
      out.emplace_back(f["name"].get<std::string>(), args);
      if (first_only) break;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("tool formats: every shared template is detected as read by hand", "[toolparse]") {
  const fs::path dir = fs::path(SY_SHARED_DIR) / "templates";
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".jinja") continue;
    const std::string name = entry.path().filename().string();
    INFO(name);
    const auto it = expected_formats().find(name);
    REQUIRE(it != expected_formats().end());
    CHECK(detect_tool_format(read_all(entry.path())) == it->second);
    ++n;
  }
  CHECK(n == expected_formats().size());
}

TEST_CASE("tool formats: generation prompts that leave <think> open", "[toolparse]") {
  std::ifstream in(fs::path(SY_SHARED_DIR) / "templates" / "cases.jsonl");
  size_t checked = 0;
  for (std::string line; std::getline(in, line);) {
    const auto c = nlohmann::json::parse(line);
    if (!c.contains("expected") || !c["context"]["add_generation_prompt"].get<bool>()) continue;
    const std::string tmpl = c["template"];
    const auto& ctx = c["context"];
    const auto flag = [&](const char* key) { return ctx.contains(key) ? std::optional(ctx[key].get<bool>()) : std::nullopt; };
    const auto thinking = flag("enable_thinking");
    // Read off the templates: Qwen3.5 opens it unless enable_thinking is false; QwQ and the R1
    // distill only when it is true; DeepSeek-V3.1 when `thinking` (or its alias) is true.
    bool opens = false;
    if (tmpl == "Qwen3.5-4B.jinja") opens = thinking != false;
    if (tmpl == "Qwen-QwQ-32B.jinja" || tmpl == "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja") opens = thinking == true;
    if (tmpl == "deepseek-ai-DeepSeek-V3.1.jinja") opens = flag("thinking").value_or(thinking.value_or(false));
    INFO(c["id"].get<std::string>());
    CHECK(prompt_opens_reasoning(c["expected"].get<std::string>()) == opens);
    ++checked;
  }
  CHECK(checked > 200);
}

TEST_CASE("tool formats: calls rendered by the templates parse back into the conversation's calls", "[toolparse]") {
  std::ifstream in(fs::path(SY_SHARED_DIR) / "templates" / "cases.jsonl");
  size_t cases = 0, calls = 0;
  std::map<ToolFormat, size_t> per_format;
  for (std::string line; std::getline(in, line);) {
    const auto c = nlohmann::json::parse(line);
    if (!c.contains("expected")) continue;
    const std::string tmpl = c["template"];
    const auto want = conversation_calls(c["context"]["messages"], tmpl.starts_with("openai-gpt-oss"));
    // Granite does not write tool calls back into the conversation.
    if (want.empty() || tmpl.starts_with("ibm-granite")) continue;
    INFO(c["id"].get<std::string>());
    ParseOptions o;
    o.tool_format = expected_formats().at(tmpl);
    o.tools = c["context"]["tools"];
    std::vector<std::pair<std::string, nlohmann::json>> got;
    for (const auto& turn : assistant_turns(tmpl, c["expected"].get<std::string>()))
      for (const auto& call : parse_output(turn, o).tool_calls)
        got.emplace_back(call.name, nlohmann::json::parse(call.arguments));
    CHECK(got == want);
    ++cases;
    calls += want.size();
    ++per_format[o.tool_format];
  }
  std::cout << "tool formats: " << calls << " calls in " << cases << " rendered conversations parsed back\n";
  // hermes, qwen3_coder, llama3_json, mistral, glm45, deepseek, harmony (Kimi's are all
  // expected errors).
  CHECK(per_format.size() == 7);
}
