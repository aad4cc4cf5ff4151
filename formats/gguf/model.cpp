#include "model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace sy::gguf {
namespace fs = std::filesystem;

Result<std::unique_ptr<Model>> Model::open(const fs::path& path) {
  std::unique_ptr<Model> m(new Model());
  auto load = [&](const fs::path& p) -> Status {
    auto map = MappedFile::open(p);
    if (!map) return map.status();
    auto file = parse(map.value()->bytes(), p.string());
    if (!file) return file.status();
    m->shards_.push_back({std::move(map.value()), std::move(file.value())});
    return Status::ok();
  };
  if (auto st = load(path); !st) return st;

  // A copy, not a reference: reopening in shard order below replaces shards_.
  const auto count = kv_int(m->shards_.front().file, "split.count");
  if (count && *count > 1) {
    const auto name = parse_split_name(path);
    if (!name) {
      char pattern[48];
      std::snprintf(pattern, sizeof pattern, "NAME-00001-of-%05d.gguf", static_cast<int>(std::min<int64_t>(*count, 99999)));
      return error::not_found(path.string() + " is one shard of a model split into " + std::to_string(*count) +
                              " files, but its name does not follow " + pattern +
                              ", so the other shards cannot be found");
    }
    if (name->count != *count)
      return error::corrupt(path.string() + ": the name says " + std::to_string(name->count) +
                            " shards but 'split.count' says " + std::to_string(*count));
    // Reopen in shard order, starting from shard 1, whichever shard was named.
    m->shards_.clear();
    for (int i = 1; i <= name->count; ++i) {
      const fs::path p = name->shard(i);
      std::error_code ec;
      if (!fs::exists(p, ec))
        return error::not_found("split model " + path.filename().string() + ": shard " + std::to_string(i) + " of " +
                                std::to_string(name->count) + " is missing; expected " + p.string());
      if (auto st = load(p); !st) return st;
    }
    std::vector<ShardRef> refs;
    for (const auto& sh : m->shards_) refs.push_back({&sh.file, sh.map->path().string()});
    if (auto st = check_split_set(refs); !st) return st;
  }

  // Metadata comes from the first shard; tensors from all, in shard then file order.
  for (const auto& [k, v] : m->shards_.front().file.kv) m->metadata_.set(k, v);
  for (size_t s = 0; s < m->shards_.size(); ++s) {
    const File& f = m->shards_[s].file;
    for (const auto& t : f.tensors) {
      m->descs_.push_back(t.desc);
      m->where_.push_back({s, f.data_offset + t.offset});
    }
  }
  return m;
}

Result<std::span<const std::byte>> Model::view(size_t index) const noexcept {
  if (index >= descs_.size()) return error::invalid_argument("no tensor with index " + std::to_string(index));
  const auto& w = where_[index];
  return shards_[w.shard].map->bytes().subspan(static_cast<size_t>(w.offset), static_cast<size_t>(descs_[index].bytes));
}

Status Model::read(size_t index, uint64_t offset, std::span<std::byte> out) const noexcept {
  auto v = view(index);
  if (!v) return v.status();
  if (offset > v.value().size() || out.size() > v.value().size() - offset)
    return error::invalid_argument("read of " + std::to_string(out.size()) + " bytes at offset " +
                                   std::to_string(offset) + " is outside tensor '" + descs_[index].name + "'");
  if (!out.empty()) std::memcpy(out.data(), v.value().data() + offset, out.size());
  return Status::ok();
}

const fs::path& Model::file_of(size_t index) const { return shards_[where_[index].shard].map->path(); }

}  // namespace sy::gguf
