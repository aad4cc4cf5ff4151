// libFuzzer target for GGUF files: header, metadata and tensor infos (parse), split sets
// (check_split_set over shards parsed from the same input), the vocabulary a model's
// metadata carries (Tokenizer::from_gguf, then encode and decode), and the hyper-parameters
// and tensor layout a loader checks before any data is read (read_hparams, then the
// architecture resolved over shapes-only weights, as `plan` and check_layout do). Any bytes
// must give a value or an error Status: never a crash, a hang, undefined behaviour, or an
// allocation driven by an unchecked count (an absurd block_count, attention sizes that
// disagree with the tensors).
//
// Input: one file, or up to four shards joined by kShardMark (see corpus/gguf/split-*).
// Every part is parsed; the parts that parse are then checked as shards 1..N of one model.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/architecture.hpp"
#include "model/hparams.hpp"
#include "model/weights.hpp"
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

// What Model::load and `plan` check before reading any tensor data: hyper-parameters against
// each other and the tensors, then every tensor the architecture needs with the shape the
// hyper-parameters give. model::check_layout is these two calls; it lives beside Model::load,
// whose registry and plugin loading this target leaves out.
void use_hparams(const sy::Metadata& md, const std::vector<sy::TensorDesc>& tensors) {
  auto hp = sy::model::read_hparams(md, tensors);
  if (!hp) {
    if (sy::first_invalid_utf8(hp.status().message())) __builtin_trap();  // messages are text
    return;
  }
  const auto w = sy::model::Weights::shapes_only(tensors);
  auto arch = sy::model::make_architecture(*hp, w);
  if (!arch && sy::first_invalid_utf8(arch.status().message())) __builtin_trap();
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
  // The tensors of all shards, in shard order, as Model::open lists them.
  std::vector<sy::TensorDesc> tensors;
  for (const auto& f : files)
    for (const auto& t : f.tensors) tensors.push_back(t.desc);
  use_hparams(md, tensors);
  return 0;
}
