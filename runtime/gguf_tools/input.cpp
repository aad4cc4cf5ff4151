#include "gguf_tools/input.hpp"

#include <algorithm>
#include <fstream>
#include <string_view>

#include "model.hpp"
#include "tokenizer/tokenizer.hpp"

namespace sy::gguf_tools {
namespace fs = std::filesystem;

namespace {

bool starts_with_gguf_magic(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  char magic[4] = {};
  return f.read(magic, 4) && std::string_view(magic, 4) == "GGUF";
}

}  // namespace

Input::~Input() = default;

Result<std::unique_ptr<Input>> Input::open(const fs::path& path) {
  std::unique_ptr<Input> in(new Input());
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && starts_with_gguf_magic(path)) {
    auto m = gguf::Model::open(path);
    if (!m) return m.status();
    in->owned_gguf_ = std::move(*m);
    in->gguf_ = in->owned_gguf_.get();
    in->source_ = in->gguf_;
    in->format_ = "gguf";
    in->metadata_ = in->gguf_->ordered_metadata();
    // A split set's keys describe the old shards, not what is written now.
    std::erase_if(in->metadata_, [](const auto& kv) { return kv.first.starts_with("split."); });
    return in;
  }
  std::vector<std::string> warnings;
  in->registry_ = std::make_unique<registry::Registry>(registry::default_search_path({}, warnings));
  auto opened = model::open_source(*in->registry_, path);
  if (!opened) return opened.status();
  in->opened_ = std::move(*opened);
  in->source_ = in->opened_->source.get();
  in->format_ = in->opened_->format_name;

  // general.* first (architecture leading, as llama.cpp writes it), then the rest by key.
  const Metadata& md = in->source_->metadata();
  if (const auto* arch = md.find("general.architecture")) in->metadata_.emplace_back("general.architecture", *arch);
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& [k, v] : md.entries()) {
      if (k == "general.architecture" || k.starts_with("general.source.")) continue;
      if (k.starts_with("general.") != (pass == 0)) continue;
      in->metadata_.emplace_back(k, v);
    }
  if (auto skipped = md.get_string("general.source.skipped")) in->notes_.push_back(*skipped);
  const fs::path dir = fs::is_directory(path, ec) ? path : path.parent_path();
  if (auto st = in->add_folder_tokenizer(dir); !st) return st;
  return in;
}

Status Input::add_folder_tokenizer(const fs::path& dir) {
  const auto arch = source_->metadata().get_string("general.architecture").value_or("");
  const auto n_vocab = source_->metadata().get_int(arch + ".vocab_size");
  std::error_code ec;
  const fs::path tj = dir / "tokenizer.json";
  if (!fs::exists(tj, ec)) {
    // llama.cpp loads a file without a vocabulary ("none") with placeholder tokens, so the
    // model still runs on token ids.
    metadata_.emplace_back("tokenizer.ggml.model", std::string("none"));
    notes_.push_back("no tokenizer.json in " + dir.string() +
                     ": the GGUF has no vocabulary (tokenizer.ggml.model = none), so it runs on token ids only");
    return Status::ok();
  }
  auto t = tok::Tokenizer::from_hf(tj);
  if (!t) return t.status();
  if (n_vocab && (*t)->n_vocab() > *n_vocab)
    return error::invalid_argument(tj.string() + " has " + std::to_string((*t)->n_vocab()) +
                                   " tokens but config.json's vocab_size is " + std::to_string(*n_vocab) +
                                   "; the tokenizer does not belong to this checkpoint");
  auto md = (*t)->gguf_metadata(n_vocab.value_or(0));
  if (!md) return Status(md.status().code(), tj.string() + ": " + md.status().message());
  // The chat template came with the folder's metadata already (tokenizer_config.json); keep
  // it after the vocabulary, where llama.cpp's converter puts it.
  auto tmpl = std::find_if(metadata_.begin(), metadata_.end(),
                           [](const auto& kv) { return kv.first == "tokenizer.chat_template"; });
  std::optional<std::pair<std::string, MetaValue>> chat;
  if (tmpl != metadata_.end()) {
    chat = std::move(*tmpl);
    metadata_.erase(tmpl);
  }
  for (auto& kv : *md) metadata_.push_back(std::move(kv));
  if (chat) metadata_.push_back(std::move(*chat));
  return Status::ok();
}

Result<std::span<const std::byte>> Input::bytes(size_t index, std::vector<std::byte>& scratch) const {
  auto v = source_->view(index);
  if (v) return *v;
  const TensorDesc& d = source_->tensors()[index];
  scratch.resize(static_cast<size_t>(d.bytes));
  if (auto st = source_->read(index, 0, scratch); !st) return st;
  return std::span<const std::byte>(scratch);
}

}  // namespace sy::gguf_tools
