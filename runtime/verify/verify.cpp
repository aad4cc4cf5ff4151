#include "verify/verify.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>

#include "checkpoint.hpp"
#include "model.hpp"
#include "split.hpp"
#include "util/sha256.hpp"

namespace sy::verify {
namespace {

namespace fs = std::filesystem;

bool is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The model's files: GGUF shards, or the safetensors shards with the index and the small
// files a folder is used with (config, tokenizer, chat template) where present.
Result<std::vector<fs::path>> model_files(const fs::path& path, Report& r) {
  std::vector<fs::path> files;
  std::error_code ec;
  const bool folder = fs::is_directory(path, ec);
  char magic[4] = {};
  if (!folder) std::ifstream(path, std::ios::binary).read(magic, 4);
  const bool gguf_file = !folder && (path.extension() == ".gguf" || std::string_view(magic, 4) == "GGUF");
  if (!folder && !gguf_file && path.extension() != ".safetensors")
    return error::invalid_argument(path.string() + " is neither a GGUF file, a .safetensors file nor a model folder");
  if (gguf_file) {
    auto m = gguf::Model::open(path);
    if (!m) return m.status();
    r.format = "gguf";
    std::set<fs::path> seen;
    if (auto split = gguf::parse_split_name(path)) {
      for (int n = 1; n <= split->count; ++n) seen.insert(split->shard(n));
    } else {
      seen.insert(path);
    }
    for (size_t i = 0; i < (*m)->tensors().size(); ++i) seen.insert((*m)->file_of(i));
    files.assign(seen.begin(), seen.end());
    r.structure = std::to_string((*m)->tensors().size()) + " tensors in " + std::to_string(files.size()) +
                  (files.size() == 1 ? " file" : " shards") + ", every tensor inside its file";
    return files;
  }
  auto ck = hf::open_checkpoint(path);
  if (!ck) return ck.status();
  r.format = "safetensors";
  for (const auto& s : ck->shards) files.push_back(s->path());
  for (const char* extra : {hf::kIndexFile, "config.json", "generation_config.json", "tokenizer.json",
                            "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja"})
    if (fs::is_regular_file(ck->dir / extra, ec)) files.push_back(ck->dir / extra);
  r.structure = std::to_string(ck->tensors.size()) + " tensors in " + std::to_string(ck->shards.size()) +
                (ck->shards.size() == 1 ? " safetensors file" : " safetensors shards") +
                ", every tensor of the index in its shard and inside the file";
  return files;
}

// FILE.sha256 beside a file: its first token, when it is a digest.
std::optional<std::string> sidecar(const fs::path& f) {
  std::ifstream in(f.string() + ".sha256");
  std::string tok;
  if (in >> tok && is_hex64(tok)) return lower(tok);
  return std::nullopt;
}

}  // namespace

bool Report::ok() const {
  return std::all_of(files.begin(), files.end(), [](const FileCheck& f) { return f.ok(); });
}

Result<std::vector<std::pair<fs::path, std::string>>> read_manifest(const fs::path& manifest) {
  std::ifstream in(manifest);
  if (!in) return error::not_found("--sha256: cannot read " + manifest.string());
  std::vector<std::pair<fs::path, std::string>> out;
  std::string line;
  int no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto sp = line.find_first_of(" \t");
    const std::string digest = line.substr(0, sp);
    if (sp == std::string::npos || !is_hex64(digest))
      return error::corrupt("--sha256: " + manifest.string() + " line " + std::to_string(no) +
                            " is not 'SHA256  FILE' (as sha256sum writes)");
    std::string name = line.substr(sp);
    name.erase(0, name.find_first_not_of(" \t"));
    if (!name.empty() && name[0] == '*') name.erase(0, 1);  // sha256sum's binary mark
    if (name.empty())
      return error::corrupt("--sha256: " + manifest.string() + " line " + std::to_string(no) + " names no file");
    out.emplace_back(manifest.parent_path() / name, lower(digest));
  }
  return out;
}

Result<Report> verify_model(const fs::path& path, const Options& o,
                            const std::function<void(const fs::path&, uint64_t, uint64_t)>& progress) {
  Report r;
  auto files = model_files(path, r);
  if (!files) return files.status();
  std::vector<std::pair<fs::path, std::string>> listed;
  if (o.manifest) {
    auto m = read_manifest(*o.manifest);
    if (!m) return m.status();
    listed = std::move(*m);
  }
  std::error_code ec;
  auto same = [&](const fs::path& a, const fs::path& b) {
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
  };
  for (const fs::path& f : *files) {
    FileCheck c;
    c.path = f;
    c.bytes = fs::file_size(f, ec);
    for (const auto& [name, digest] : listed)
      if (same(name, f)) {
        c.expected = digest;
        c.expected_from = o.manifest->string();
      }
    if (c.expected.empty())
      if (auto s = sidecar(f)) {
        c.expected = *s;
        c.expected_from = f.string() + ".sha256";
      }
    r.files.push_back(std::move(c));
  }
  // Files the manifest lists beyond the model's own: checked too, a missing one fails.
  for (const auto& [name, digest] : listed) {
    if (std::any_of(r.files.begin(), r.files.end(), [&, &name = name](const FileCheck& c) { return same(c.path, name); }))
      continue;
    FileCheck c;
    c.path = name;
    c.expected = digest;
    c.expected_from = o.manifest->string();
    c.missing = !fs::is_regular_file(name, ec);
    if (!c.missing) c.bytes = fs::file_size(name, ec);
    r.files.push_back(std::move(c));
  }
  for (FileCheck& c : r.files) {
    if (c.missing || (c.expected.empty() && !o.hash_all)) continue;
    auto h = util::sha256_file(c.path, [&](uint64_t done, uint64_t total) {
      if (progress) progress(c.path, done, total);
    });
    if (!h) return h.status();
    c.actual = *h;
  }
  return r;
}

}  // namespace sy::verify
