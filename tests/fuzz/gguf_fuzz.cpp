// libFuzzer target for the GGUF parser: any bytes must give a File or an error Status,
// never a crash, a hang, undefined behaviour or an allocation driven by an unchecked count.
#include <cstddef>
#include <cstdint>
#include <span>

#include "parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto r = sy::gguf::parse(std::as_bytes(std::span(data, size)), "fuzz.gguf");
  if (r.has_value()) {
    // Touch what a loader would: every tensor's extent must lie inside the input.
    for (const auto& t : r.value().tensors)
      if (r.value().data_offset + t.offset + t.desc.bytes > size) __builtin_trap();
  }
  return 0;
}
