#include "split.hpp"

#include <charconv>
#include <cstdio>
#include <unordered_set>

namespace sy::gguf {
namespace fs = std::filesystem;

fs::path SplitName::shard(int n) const {
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d.gguf", n, count);
  return fs::path(prefix + suffix);
}

namespace {

// Five ASCII digits at s[at], or -1.
int five_digits(std::string_view s, size_t at) {
  int v = -1;
  const char* b = s.data() + at;
  const auto [end, ec] = std::from_chars(b, b + 5, v);
  return ec == std::errc() && end == b + 5 && b[0] != '-' && b[0] != '+' ? v : -1;
}

}  // namespace

const MetaValue* find_kv(const File& f, std::string_view key) {
  for (const auto& [k, v] : f.kv)
    if (k == key) return &v;
  return nullptr;
}

std::optional<int64_t> kv_int(const File& f, std::string_view key) {
  const auto* v = find_kv(f, key);
  return v ? meta_as_int(*v) : std::nullopt;
}

std::optional<SplitName> parse_split_name(const fs::path& p) {
  // "-NNNNN-of-MMMMM.gguf" is 20 bytes at the end.
  const std::string s = p.string();
  constexpr size_t kTail = 20;
  if (s.size() < kTail) return std::nullopt;
  const size_t at = s.size() - kTail;
  if (s[at] != '-' || s.compare(at + 6, 4, "-of-") != 0 || s.compare(at + 15, 5, ".gguf") != 0) return std::nullopt;
  SplitName n{s.substr(0, at), five_digits(s, at + 1), five_digits(s, at + 10)};
  if (n.count < 1 || n.number < 1 || n.number > n.count) return std::nullopt;
  return n;
}

Status check_split_set(std::span<const ShardRef> shards) {
  const size_t count = shards.size();
  size_t total = 0;
  std::unordered_set<std::string_view> names;
  for (size_t i = 0; i < count; ++i) {
    const File& f = *shards[i].file;
    const std::string& name = shards[i].name;
    if (const auto no = kv_int(f, "split.no"); no && *no != static_cast<int64_t>(i))
      return error::corrupt(name + ": 'split.no' is " + std::to_string(*no) + ", expected " + std::to_string(i) +
                            " for shard " + std::to_string(i + 1) + " of " + std::to_string(count));
    if (const auto c = kv_int(f, "split.count"); c && *c != static_cast<int64_t>(count) && (count > 1 || *c > 1))
      return error::corrupt(name + ": 'split.count' is " + std::to_string(*c) + ", but the model has " +
                            std::to_string(count) + (count == 1 ? " file" : " shards"));
    for (const auto& t : f.tensors)
      if (!names.insert(t.desc.name).second)
        return error::corrupt(name + ": tensor '" + t.desc.name + "' also appears in an earlier shard");
    total += f.tensors.size();
  }
  if (count > 1)
    if (const auto want = kv_int(*shards[0].file, "split.tensors.count"); want && *want != static_cast<int64_t>(total))
      return error::corrupt(shards[0].name + ": 'split.tensors.count' says " + std::to_string(*want) +
                            " tensors, but the shards hold " + std::to_string(total));
  return Status::ok();
}

}  // namespace sy::gguf
