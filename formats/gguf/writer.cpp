#include "writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unordered_set>

#include "parse.hpp"

namespace sy::gguf {
namespace {

class Out {
 public:
  explicit Out(std::ofstream& f) : f_(f) {}
  void bytes(const void* p, size_t n) {
    f_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    pos_ += n;
  }
  template <class T>
  void put(T v) {
    bytes(&v, sizeof v);
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void pad_to(uint64_t alignment) {
    static const char zeros[64] = {};
    while (pos_ % alignment) bytes(zeros, std::min<uint64_t>(sizeof zeros, alignment - pos_ % alignment));
  }
  uint64_t pos() const { return pos_; }

 private:
  std::ofstream& f_;
  uint64_t pos_ = 0;
};

Status check_value(const MetaValue& v, const std::string& key) {
  if (const auto* a = std::get_if<MetaArray>(&v))
    for (const auto& item : a->items) {
      if (meta_type_of(item) != a->type)
        return error::invalid_argument("metadata '" + key + "': an array of " + meta_type_name(a->type) +
                                       " holds a " + meta_type_name(meta_type_of(item)));
      if (auto st = check_value(item, key); !st) return st;
    }
  return Status::ok();
}

void put_value(Out& o, const MetaValue& v) {
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::string>) {
          o.str(x);
        } else if constexpr (std::is_same_v<X, MetaArray>) {
          o.put<uint32_t>(static_cast<uint32_t>(gtype_of(x.type)));
          o.put<uint64_t>(x.items.size());
          for (const auto& item : x.items) put_value(o, item);
        } else if constexpr (std::is_same_v<X, bool>) {
          o.put<uint8_t>(x ? 1 : 0);
        } else {
          o.put<X>(x);
        }
      },
      v);
}

}  // namespace

Status Writer::set_alignment(uint32_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return error::invalid_argument("GGUF alignment must be a power of two, got " + std::to_string(alignment));
  alignment_ = alignment;
  return Status::ok();
}

void Writer::add(std::string key, MetaValue value) { kv_.emplace_back(std::move(key), std::move(value)); }

void Writer::add_tensor(TensorDesc desc, std::span<const std::byte> data) {
  add_tensor(std::move(desc), [data](std::span<std::byte> out) -> Status {
    if (out.size() != data.size())
      return error::invalid_argument("tensor data is " + std::to_string(data.size()) + " bytes, expected " +
                                     std::to_string(out.size()));
    if (!data.empty()) std::memcpy(out.data(), data.data(), data.size());
    return Status::ok();
  });
}

void Writer::add_tensor(TensorDesc desc, Fill fill) { tensors_.push_back({std::move(desc), std::move(fill)}); }

Status Writer::write(const std::filesystem::path& path) const {
  // Validate everything before touching the disk.
  std::unordered_set<std::string> keys;
  bool has_alignment_key = false;
  for (const auto& [k, v] : kv_) {
    if (!keys.insert(k).second) return error::invalid_argument("metadata key '" + k + "' is given twice");
    if (auto st = check_value(v, k); !st) return st;
    if (k == "general.alignment") {
      const auto* a = std::get_if<uint32_t>(&v);
      if (!a || *a != alignment_)
        return error::invalid_argument("'general.alignment' must be a u32 equal to the writer's alignment (" +
                                       std::to_string(alignment_) + ")");
      has_alignment_key = true;
    }
  }
  std::unordered_set<std::string> names;
  for (const auto& t : tensors_) {
    if (!names.insert(t.desc.name).second) return error::invalid_argument("tensor '" + t.desc.name + "' is given twice");
    if (t.desc.shape.size() > static_cast<size_t>(kMaxDims))
      return error::invalid_argument("tensor '" + t.desc.name + "' has more than 4 dimensions");
    const auto* info = storage_type_info(static_cast<uint32_t>(t.desc.type));
    if (!info)
      return error::invalid_argument("tensor '" + t.desc.name + "' has storage type id " +
                                     std::to_string(static_cast<uint32_t>(t.desc.type)) + ", which is not registered");
    if (!info->in_gguf)
      return error::invalid_argument("tensor '" + t.desc.name + "' has type " + std::string(info->name) +
                                     ", which GGUF cannot store; convert it to a GGUF type first");
    const auto bytes = tensor_bytes(t.desc.type, t.desc.shape);
    if (!bytes || *bytes != t.desc.bytes)
      return error::invalid_argument("tensor '" + t.desc.name + "': its byte size does not match its shape and type");
  }

  const std::filesystem::path tmp = path.string() + ".partial";
  std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
  if (!f) return error::io_error("cannot create " + tmp.string() + ": " + std::strerror(errno) + " (does the folder exist and is it writable?)");
  Out o(f);
  o.bytes("GGUF", 4);
  o.put<uint32_t>(3);
  o.put<uint64_t>(tensors_.size());
  const bool add_alignment = alignment_ != kDefaultAlignment && !has_alignment_key;
  o.put<uint64_t>(kv_.size() + (add_alignment ? 1 : 0));
  for (const auto& [k, v] : kv_) {
    o.str(k);
    o.put<uint32_t>(static_cast<uint32_t>(gtype_of(meta_type_of(v))));
    put_value(o, v);
  }
  if (add_alignment) {
    o.str("general.alignment");
    o.put<uint32_t>(static_cast<uint32_t>(GType::u32));
    o.put<uint32_t>(alignment_);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    o.str(t.desc.name);
    o.put<uint32_t>(static_cast<uint32_t>(t.desc.shape.size()));
    for (int64_t d : t.desc.shape) o.put<uint64_t>(static_cast<uint64_t>(d));
    o.put<uint32_t>(static_cast<uint32_t>(t.desc.type));
    o.put<uint64_t>(offset);
    offset = (offset + t.desc.bytes + alignment_ - 1) / alignment_ * alignment_;
  }
  o.pad_to(alignment_);
  std::vector<std::byte> buf;
  for (const auto& t : tensors_) {
    buf.resize(static_cast<size_t>(t.desc.bytes));
    if (auto st = t.fill(buf); !st) {
      f.close();
      std::filesystem::remove(tmp);
      return error::invalid_argument("tensor '" + t.desc.name + "': " + st.message());
    }
    o.bytes(buf.data(), buf.size());
    o.pad_to(alignment_);
  }
  f.flush();
  if (!f) {
    f.close();
    std::filesystem::remove(tmp);
    return error::io_error("writing " + tmp.string() + " failed (disk full?)");
  }
  f.close();
  // Synced before the rename, and the folder after it: after a crash the final name holds
  // either the old file or the whole new one.
  if (const int fd = ::open(tmp.c_str(), O_RDONLY); fd >= 0) {
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced) {
      std::filesystem::remove(tmp);
      return error::io_error("writing " + tmp.string() + " failed: it could not be synced to disk");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return error::io_error("cannot move " + tmp.string() + " to " + path.string() + ": " + ec.message());
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (const int dfd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

}  // namespace sy::gguf
