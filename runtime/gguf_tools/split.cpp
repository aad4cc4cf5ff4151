#include "gguf_tools/split.hpp"

#include <cctype>
#include <cstdint>

#include "model.hpp"
#include "split.hpp"

namespace sy::gguf_tools {
namespace fs = std::filesystem;

std::vector<std::vector<size_t>> plan_split(std::span<const TensorDesc> tensors, const SplitOptions& o) {
  std::vector<std::vector<size_t>> shards;
  if (o.no_tensor_first_split) shards.emplace_back();
  uint64_t bytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const bool full = shards.empty() || (o.no_tensor_first_split && shards.size() == 1) ||
                      (o.max_bytes > 0 ? !shards.back().empty() && bytes + tensors[i].bytes > o.max_bytes
                                       : static_cast<int64_t>(shards.back().size()) >= o.max_tensors);
    if (full) {
      shards.emplace_back();
      bytes = 0;
    }
    shards.back().push_back(i);
    bytes += tensors[i].bytes;
  }
  if (shards.empty()) shards.emplace_back();
  return shards;
}

Result<uint64_t> parse_size(std::string_view s) {
  const auto bad = [&] {
    return error::invalid_argument("--split-max-size " + std::string(s) + ": give a size such as 512M or 2G");
  };
  if (s.empty()) return bad();
  uint64_t mult = 1;
  switch (std::toupper(static_cast<unsigned char>(s.back()))) {
    case 'K': mult = 1ull << 10; break;
    case 'M': mult = 1ull << 20; break;
    case 'G': mult = 1ull << 30; break;
    default: break;
  }
  if (mult != 1) s.remove_suffix(1);
  if (s.empty() || s.size() > 12) return bad();
  uint64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad();
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v == 0 || v > UINT64_MAX / mult) return bad();
  return v * mult;
}

Result<std::vector<fs::path>> split_model(const fs::path& input, const fs::path& prefix, const SplitOptions& o,
                                           bool dry_run, const Progress& progress) {
  if (o.max_bytes == 0 && o.max_tensors < 1) return error::invalid_argument("--split-max-tensors must be at least 1");
  auto opened = Input::open(input);
  if (!opened) return opened.status();
  const Input& in = **opened;
  if (!in.is_gguf())
    return error::invalid_argument(input.string() + " is not a GGUF file; `switchyard convert` makes one from a model folder");
  const auto tensors = in.source().tensors();
  const auto shards = plan_split(tensors, o);
  if (shards.size() > 99999) return error::invalid_argument("that would make more than 99999 shards; allow more per shard");
  gguf::SplitName names{prefix.string(), 1, static_cast<int>(shards.size())};
  std::vector<fs::path> paths;
  for (size_t s = 0; s < shards.size(); ++s) paths.push_back(names.shard(static_cast<int>(s + 1)));
  if (dry_run) return paths;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::exists(p, ec) && fs::equivalent(p, input, ec))
      return error::invalid_argument("shard " + p.string() + " would overwrite the input; choose another prefix");
  }

  size_t written = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    gguf::Writer w;
    if (s == 0) {
      if (auto st = add_metadata(w, in.metadata()); !st) return st;
    } else if (in.gguf()->alignment() != gguf::kDefaultAlignment) {
      if (auto st = w.set_alignment(in.gguf()->alignment()); !st) return st;
    }
    w.add("split.no", MetaValue(static_cast<uint16_t>(s)));
    w.add("split.count", MetaValue(static_cast<uint16_t>(shards.size())));
    if (s == 0) w.add("split.tensors.count", MetaValue(static_cast<int32_t>(tensors.size())));
    for (size_t i : shards[s]) {
      Target keep{true, tensors[i].type, {}};
      std::function<void()> report;
      if (progress)
        report = [&progress, &tensors, i, n = written, count = tensors.size()] {
          progress({n, count, tensors[i].name, tensors[i].type, tensors[i].type, tensors[i].bytes, tensors[i].bytes});
        };
      ++written;
      add_tensor(w, in, i, keep, 1, std::move(report));
    }
    if (auto st = w.write(paths[s]); !st) return st;
  }
  return paths;
}

Status merge_model(const fs::path& first_shard, const fs::path& output, const Progress& progress) {
  auto opened = Input::open(first_shard);
  if (!opened) return opened.status();
  const Input& in = **opened;
  if (!in.is_gguf())
    return error::invalid_argument(first_shard.string() + " is not a GGUF file; give the first shard of a split set");
  if (in.gguf()->shard_count() < 2)
    return error::invalid_argument(first_shard.string() +
                                   " is not part of a split set (no PREFIX-00001-of-0000N.gguf shards); nothing to merge");
  std::error_code ec;
  for (size_t i = 0; i < in.source().tensors().size(); ++i)
    if (fs::exists(output, ec) && fs::equivalent(output, in.gguf()->file_of(i), ec))
      return error::invalid_argument("the output " + output.string() + " is one of the shards; write to another file");
  std::vector<Target> targets;
  for (const auto& t : in.source().tensors()) targets.push_back({true, t.type, {}});
  return write_gguf(in, in.metadata(), targets, output, 1, progress);
}

}  // namespace sy::gguf_tools
