// libFuzzer target for GGUF files: header, metadata and tensor infos (parse), split sets
// (check_split_set over shards parsed from the same input), and the vocabulary a model's
// metadata carries (Tokenizer::from_gguf, then encode and decode). Any bytes must give a
// value or an error Status: never a crash, a hang, undefined behaviour, or an allocation
// driven by an unchecked count.
//
// Input: one file, or up to four shards joined by kShardMark (see corpus/gguf/split-*).
// Every part is parsed; the parts that parse are then checked as shards 1..N of one model.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parse.hpp"
#include "split.hpp"
#include "switchyard/utf8.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

constexpr std::string_view kShardMark = "\n--shard--\n";

void use_tokenizer(const sy::Metadata& md) {
  if (!md.contains("tokenizer.ggml.model")) return;
  auto t = sy::tok::Tokenizer::from_gguf(md, "fuzz.gguf");
  if (!t) {
    if (sy::first_invalid_utf8(t.status().message())) __builtin_trap();  // messages are text
    return;
  }
  const auto& tok = **t;
  const auto ids = tok.encode("Hello world, <0x41> caf\xC3\xA9 \xE5\x90\x8D\n\t 123", true, true);
  for (int32_t id : ids)
    if (id < 0 || id >= tok.n_vocab()) __builtin_trap();  // ids index the embedding table
  (void)tok.decode(ids);
  // Every token decodes, whatever the vocabulary says about it.
  for (int32_t id = -1; id <= tok.n_vocab() && id < 4096; ++id) (void)tok.piece(id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t at = parts.size() < 3 ? in.find(kShardMark, start) : std::string_view::npos;
    parts.push_back(in.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + kShardMark.size();
  }
  std::vector<sy::gguf::File> files;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto bytes = std::as_bytes(std::span(parts[i].data(), parts[i].size()));
    auto r = sy::gguf::parse(bytes, "shard" + std::to_string(i + 1) + ".gguf");
    if (!r.has_value()) {
      if (sy::first_invalid_utf8(r.status().message())) __builtin_trap();  // messages are text
      continue;
    }
    // Touch what a loader would: every tensor's extent must lie inside its part.
    for (const auto& t : r.value().tensors)
      if (r.value().data_offset + t.offset + t.desc.bytes > parts[i].size()) __builtin_trap();
    files.push_back(std::move(r.value()));
  }
  if (files.empty()) return 0;
  if (files.size() > 1) {
    std::vector<sy::gguf::ShardRef> refs;
    for (size_t i = 0; i < files.size(); ++i) refs.push_back({&files[i], "shard" + std::to_string(i + 1)});
    if (const auto st = sy::gguf::check_split_set(refs); !st && sy::first_invalid_utf8(st.message())) __builtin_trap();
  }
  // The model's metadata is the first shard's, as Model::open builds it.
  sy::Metadata md;
  for (const auto& [k, v] : files.front().kv) md.set(k, v);
  use_tokenizer(md);
  return 0;
}
