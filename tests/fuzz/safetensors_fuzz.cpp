// libFuzzer target for safetensors headers and Hugging Face configs: the input is a
// safetensors file, then optionally a NUL-free separator line "--config--" and a config.json.
// Any bytes must give a header or an error Status whose message is text; a header must only
// describe bytes that exist, without overlaps, with sizes that match its shapes; a config
// must map or be refused, and every tensor name must map to a canonical name or not at all.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.hpp"
#include "names.hpp"
#include "safetensors.hpp"
#include "switchyard/utf8.hpp"

namespace {

void check_header(std::span<const std::byte> file) {
  auto h = sy::hf::parse_header(file, "fuzz.safetensors");
  if (!h) {
    if (sy::first_invalid_utf8(h.status().message())) __builtin_trap();  // messages are text
    return;
  }
  uint64_t last_end = 0;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& t : h->tensors) {
    uint64_t n = sy::hf::dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      if (d < 0) __builtin_trap();
      n *= static_cast<uint64_t>(d);
    }
    if (n != t.bytes || t.begin < h->data_offset || t.begin > file.size() || t.bytes > file.size() - t.begin)
      __builtin_trap();  // a view of a tensor stays inside the file
    if (t.bytes > 0) spans.emplace_back(t.begin, t.begin + t.bytes);
    last_end = std::max(last_end, t.begin + t.bytes);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second) __builtin_trap();
  (void)last_end;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kSep = "\n--config--\n";
  const size_t sep = in.find(kSep);
  const std::string_view st = in.substr(0, sep);
  check_header({reinterpret_cast<const std::byte*>(st.data()), st.size()});
  if (sep == std::string_view::npos) return 0;
  const auto cfg = nlohmann::json::parse(in.substr(sep + kSep.size()), nullptr, /*allow_exceptions=*/false);
  if (cfg.is_discarded()) return 0;
  (void)sy::hf::quantized_by(cfg);
  auto c = sy::hf::read_config(cfg, "config.json");
  if (!c) {
    if (sy::first_invalid_utf8(c.status().message())) __builtin_trap();
    return 0;
  }
  if (auto h = sy::hf::parse_header({reinterpret_cast<const std::byte*>(st.data()), st.size()}, "fuzz.safetensors"))
    for (const auto& t : h->tensors) {
      const auto m = sy::hf::map_name(t.name, *c);
      if (m.action == sy::hf::Action::expert && m.expert < 0) __builtin_trap();
    }
  return 0;
}
