// libFuzzer target for the chat-template interpreter: any template source must parse to a
// template or an error, and rendering must end (within the limits) with text or an error,
// never a crash, a hang or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chat/template.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const sy::chat::Value context = sy::chat::from_json(nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi {{ x }} 😀"},
                 {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
                 {"role": "tool", "content": [{"type": "text", "text": "42"}]}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": ["integer", "null"]}}}}}],
    "documents": null, "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})"));
  sy::chat::RenderOptions opts;
  opts.max_steps = 200000;
  opts.max_output = 1 << 20;
  opts.max_depth = 30;
  auto t = sy::chat::Template::parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.jinja");
  if (t.has_value()) (void)t->render(context, opts);
  return 0;
}
