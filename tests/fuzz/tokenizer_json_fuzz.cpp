// libFuzzer target for Hugging Face tokenizer files: the input is tokenizer.json, then
// optionally a NUL byte (which JSON text cannot contain) and tokenizer_config.json. Any
// bytes must give a tokenizer or an error Status whose message is text; a tokenizer must
// give ids inside its vocabulary and decode them without failing.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "switchyard/utf8.hpp"
#include "tokenizer/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string_view json = in.substr(0, nul);
  const std::optional<std::string_view> config =
      nul == std::string_view::npos ? std::nullopt : std::optional<std::string_view>(in.substr(nul + 1));
  auto t = sy::tok::Tokenizer::from_hf_text(json, config, "tokenizer.json", "tokenizer_config.json");
  if (!t) {
    if (sy::first_invalid_utf8(t.status().message())) __builtin_trap();  // messages are text
    return 0;
  }
  const auto& tok = **t;
  for (const bool special : {false, true}) {
    const auto ids = tok.encode("Hello world! <|im_start|>user\n caf\xC3\xA9 \xE5\x90\x8D 12345 \xF0\x9F\x98\x80\xFF", special, special);
    for (int32_t id : ids)
      if (id < 0 || id >= tok.n_vocab()) __builtin_trap();  // ids index the embedding table
    (void)tok.decode(ids);
  }
  for (int32_t id = -1; id <= tok.n_vocab() && id < 4096; ++id) (void)tok.piece(id);
  return 0;
}
