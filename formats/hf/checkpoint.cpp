#include "checkpoint.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <sys/mman.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "names_text.hpp"

namespace sy::hf {
namespace fs = std::filesystem;
namespace {

// Index files list every tensor once: tens of MiB would be a model of millions of tensors.
constexpr uint64_t kMaxIndexBytes = 64ull << 20;

Status add_shard(Checkpoint& c, const fs::path& file) {
  auto f = SafetensorsFile::open(file);
  if (!f) return f.status();
  c.shards.push_back(std::move(*f));
  return Status::ok();
}

// Every tensor of every shard, each shard's in the order of its data.
void list_all(Checkpoint& c) {
  for (uint32_t s = 0; s < c.shards.size(); ++s) {
    std::vector<const StTensor*> ts;
    for (const auto& t : c.shards[s]->header().tensors) ts.push_back(&t);
    std::stable_sort(ts.begin(), ts.end(), [](const StTensor* a, const StTensor* b) { return a->begin < b->begin; });
    for (const auto* t : ts) c.tensors.push_back({s, t});
  }
}

Result<Checkpoint> open_index(const fs::path& dir, const fs::path& index) {
  auto text = read_text_file(index, kMaxIndexBytes);
  if (!text) return text.status();
  const std::string where = index.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const std::exception& e) {
    return error::corrupt(where + " is not valid JSON (" + quoted_text(e.what(), 200) + "); download it again");
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    return error::corrupt(where + " has no 'weight_map' object (tensor name -> shard file); download it again");
  // Shard names are plain file names in the folder: an index must not reach outside it.
  std::map<std::string, std::vector<std::string>> by_shard;
  for (const auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string())
      return error::corrupt(where + ": weight_map entry " + quoted_text(name) + " is not a file name; download it again");
    const std::string f = file.get<std::string>();
    if (f.empty() || f == "." || f == ".." || f.find('/') != std::string::npos || f.find('\\') != std::string::npos)
      return error::corrupt(where + ": weight_map puts " + quoted_text(name) + " in " + quoted_text(f) +
                            ", which is not a file name in this folder; shards must lie beside the index");
    by_shard[f].push_back(name);
  }
  if (by_shard.empty()) return error::corrupt(where + ": weight_map is empty; the index lists no tensors");
  Checkpoint c;
  c.dir = dir;
  for (const auto& [file, names] : by_shard) {
    const fs::path p = dir / file;
    std::error_code ec;
    if (!fs::exists(p, ec))
      return error::not_found(where + " puts tensor " + quoted_text(names.front()) + " in shard " + quoted_text(file) +
                              ", but " + p.string() + " is missing; download that shard");
    if (auto st = add_shard(c, p); !st) return st;
    const auto& shard = *c.shards.back();
    std::vector<const StTensor*> ts;
    for (const auto& n : names) {
      const StTensor* t = shard.find(n);
      if (!t)
        return error::corrupt(where + " puts tensor " + quoted_text(n) + " in shard " + quoted_text(file) + ", but " +
                              p.string() + " has no such tensor; the shard does not belong to this index, so download "
                              "both again");
      ts.push_back(t);
    }
    std::stable_sort(ts.begin(), ts.end(), [](const StTensor* a, const StTensor* b) { return a->begin < b->begin; });
    for (const auto* t : ts) c.tensors.push_back({static_cast<uint32_t>(c.shards.size() - 1), t});
  }
  return c;
}

}  // namespace

void release_pages(const Checkpoint& c) noexcept {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (const auto& s : c.shards) {
    const auto b = s->bytes();
    const auto begin = (reinterpret_cast<uintptr_t>(b.data()) + page - 1) & ~(page - 1);
    const auto end = (reinterpret_cast<uintptr_t>(b.data()) + b.size()) & ~(page - 1);
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
}

Result<std::string> read_text_file(const fs::path& path, uint64_t max_bytes) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return error::io_error("cannot read " + path.string() + ": " + ec.message());
  if (size > max_bytes)
    return error::corrupt(path.string() + " is " + std::to_string(size) + " bytes, more than the " +
                          std::to_string(max_bytes) + " such a file can need; it is not what its name says");
  std::ifstream in(path, std::ios::binary);
  std::string s(static_cast<size_t>(size), '\0');
  if (!in || !in.read(s.data(), static_cast<std::streamsize>(size)))
    return error::io_error("cannot read " + path.string() + ": " + std::strerror(errno));
  return s;
}

Result<Checkpoint> open_checkpoint(const fs::path& path) {
  std::error_code ec;
  const bool is_dir = fs::is_directory(path, ec);
  const fs::path dir = is_dir ? path : path.parent_path();
  const fs::path index = dir / kIndexFile;
  if (is_dir) {
    if (fs::exists(index, ec)) return open_index(dir, index);
    if (!fs::exists(dir / kSingleFile, ec))
      return error::not_found(dir.string() + " holds neither " + kSingleFile + " nor " + kIndexFile +
                              "; a Hugging Face model folder needs its weights (download the *.safetensors files)");
    Checkpoint c;
    c.dir = dir;
    if (auto st = add_shard(c, dir / kSingleFile); !st) return st;
    list_all(c);
    return c;
  }
  // A file named directly: the whole sharded checkpoint when the index beside it lists it.
  if (fs::exists(index, ec)) {
    auto text = read_text_file(index, kMaxIndexBytes);
    if (text && text->find("\"" + path.filename().string() + "\"") != std::string::npos) return open_index(dir, index);
  }
  Checkpoint c;
  c.dir = dir;
  if (auto st = add_shard(c, path); !st) return st;
  list_all(c);
  return c;
}

}  // namespace sy::hf
