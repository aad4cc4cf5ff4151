// libFuzzer target for the chat-template interpreter: any template source, rendered with
// any context, must end (within tight limits) with text or an error, never a crash, a hang
// or undefined behaviour. The input is a JSON context, a line "----", then the template;
// without that separator, or when the JSON does not parse to an object, the whole input is
// the template and a fixed chat context is used.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string_view>

#include "chat/template.hpp"

namespace {

const sy::chat::Value& fixed_context() {
  static const sy::chat::Value context = sy::chat::from_json(nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi {{ x }} 😀"},
                 {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
                 {"role": "tool", "content": [{"type": "text", "text": "42"}]}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": ["integer", "null"]}}}}}],
    "documents": null, "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
    "big": 9223372036854775807, "small": -9223372036854775808, "huge": 1e308, "empty": "", "nothing": [], "blank": {}})"));
  return context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  sy::chat::Value context = fixed_context();
  std::string_view source = input;
  const size_t sep = input.find("\n----\n");
  // Contexts are small: a JSON parse of megabytes would only slow the fuzzer down.
  if (sep != std::string_view::npos && sep < 4096) {
    const auto j = nlohmann::ordered_json::parse(input.substr(0, sep), nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && !j.is_discarded()) {
      context = sy::chat::from_json(j);
      source = input.substr(sep + 6);
    }
  }
  sy::chat::RenderOptions opts;
  opts.max_steps = 200000;
  opts.max_output = 1 << 20;
  opts.max_depth = 30;
  // A fixed clock: strftime_now must not make one input behave differently between replays.
  std::tm fixed{};
  fixed.tm_year = 126;
  fixed.tm_mon = 11;
  fixed.tm_mday = 3;
  fixed.tm_hour = 12;
  fixed.tm_wday = 4;
  fixed.tm_yday = 336;
  opts.now = fixed;
  auto t = sy::chat::Template::parse(source, "fuzz.jinja");
  if (t.has_value()) (void)t->render(context, opts);
  return 0;
}
