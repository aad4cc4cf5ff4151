#include "model.hpp"

#include <cstdio>
#include <cstring>
#include <regex>
#include <unordered_set>

namespace sy::gguf {
namespace fs = std::filesystem;

fs::path SplitName::shard(int n) const {
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d.gguf", n, count);
  return fs::path(prefix + suffix);
}

std::optional<SplitName> parse_split_name(const fs::path& p) {
  static const std::regex re(R"(^(.*)-(\d{5})-of-(\d{5})\.gguf$)");
  std::smatch m;
  const std::string s = p.string();
  if (!std::regex_match(s, m, re)) return std::nullopt;
  SplitName n{m[1].str(), std::stoi(m[2].str()), std::stoi(m[3].str())};
  if (n.count < 1 || n.number < 1 || n.number > n.count) return std::nullopt;
  return n;
}

namespace {

const MetaValue* find_kv(const File& f, std::string_view key) {
  for (const auto& [k, v] : f.kv)
    if (k == key) return &v;
  return nullptr;
}

std::optional<int64_t> kv_int(const File& f, std::string_view key) {
  const auto* v = find_kv(f, key);
  return v ? meta_as_int(*v) : std::nullopt;
}

}  // namespace

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

  // Copies, not references: reopening in shard order below replaces shards_.
  const auto count = kv_int(m->shards_.front().file, "split.count");
  const auto total_tensors = kv_int(m->shards_.front().file, "split.tensors.count");
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
      const auto no = kv_int(m->shards_.back().file, "split.no");
      if (no && *no != i - 1)
        return error::corrupt(p.string() + ": 'split.no' is " + std::to_string(*no) + ", expected " +
                              std::to_string(i - 1) + " for shard " + std::to_string(i));
    }
  }

  // Metadata comes from the first shard; tensors from all, in shard then file order.
  for (const auto& [k, v] : m->shards_.front().file.kv) m->metadata_.set(k, v);
  std::unordered_set<std::string> names;
  for (size_t s = 0; s < m->shards_.size(); ++s) {
    const File& f = m->shards_[s].file;
    for (const auto& t : f.tensors) {
      if (!names.insert(t.desc.name).second)
        return error::corrupt(m->shards_[s].map->path().string() + ": tensor '" + t.desc.name +
                              "' also appears in an earlier shard");
      m->descs_.push_back(t.desc);
      m->where_.push_back({s, f.data_offset + t.offset});
    }
  }
  if (total_tensors && m->shards_.size() > 1 && static_cast<size_t>(*total_tensors) != m->descs_.size())
    return error::corrupt(path.string() + ": 'split.tensors.count' says " + std::to_string(*total_tensors) +
                          " tensors, but the shards hold " + std::to_string(m->descs_.size()));
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
