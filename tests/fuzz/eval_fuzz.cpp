// libFuzzer target for `switchyard eval`'s inputs: any bytes as an eval file (YAML) or as a
// prompt set (JSON Lines) must end as a parsed value or an error sentence, never a crash,
// undefined behaviour or an exception escaping. The first byte picks which.
#include <cstddef>
#include <cstdint>
#include <string>

#include "eval/prompts.hpp"
#include "eval/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) == 0) {
    auto s = sy::eval::parse_spec(text, "fuzz.yaml", "/cfg");
    if (!s && s.status().message().empty()) __builtin_trap();
    // A parsed file names its reference among its pipelines.
    if (s) {
      bool found = false;
      for (const auto& p : s->pipelines) found = found || p.name == s->reference;
      if (!found) __builtin_trap();
    }
  } else {
    auto p = sy::eval::parse_prompts(text, "fuzz.jsonl");
    if (!p && p.status().message().empty()) __builtin_trap();
    if (p)
      for (const auto& x : *p)
        if (x.text.empty() == x.messages.empty()) __builtin_trap();  // exactly one of the two
  }
  return 0;
}
