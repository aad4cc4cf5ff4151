#include "parse.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include "quoted.hpp"
#include "switchyard/utf8.hpp"

namespace sy::gguf {
namespace {

// Internal only: a parse error unwinds to parse(), which turns it into a Status.
struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string quoted(const std::string& s) { return quoted_text(s, 80); }

class Cursor {
 public:
  Cursor(std::span<const std::byte> b, const std::string& name) : b_(b), name_(name) {}

  [[noreturn]] void fail(const std::string& what) const { throw ParseError(name_ + ": " + what); }

  size_t pos() const { return pos_; }
  size_t remaining() const { return b_.size() - pos_; }
  size_t size() const { return b_.size(); }

  void need(size_t n, const char* what) const {
    if (n > remaining())
      fail(std::string("the file is truncated: reading ") + what + " at offset " + std::to_string(pos_) + " needs " +
           std::to_string(n) + " bytes, but only " + std::to_string(remaining()) + " remain");
  }

  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));  // GGUF is little-endian, like every host we target
    pos_ += sizeof(T);
    return v;
  }

  std::string string(const char* what) {
    const uint64_t len = read<uint64_t>(what);
    if (len > remaining())
      fail(std::string(what) + " at offset " + std::to_string(pos_ - 8) + " claims " + std::to_string(len) +
           " bytes, more than the " + std::to_string(remaining()) + " left in the file");
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

  // A key or tensor name: GGUF strings are UTF-8, and names are compared and printed, so
  // one that is not is refused where it starts (its length field), not passed on.
  std::string name(const char* what, const char* noun, const char* rule) {
    const size_t at = pos_;
    std::string s = string(what);
    if (const auto bad = first_invalid_utf8(s)) {
      char detail[64];
      std::snprintf(detail, sizeof detail, "byte 0x%02x at position %zu", static_cast<unsigned char>(s[*bad]), *bad);
      fail(std::string(noun) + " " + quoted(s) + " at offset " + std::to_string(at) + " is not valid UTF-8 (" + detail +
           "); " + rule);
    }
    return s;
  }

 private:
  std::span<const std::byte> b_;
  const std::string& name_;
  size_t pos_ = 0;
};

// Smallest encoding of one element of a type, to bound counts by the bytes left.
size_t min_size(GType t) {
  switch (t) {
    case GType::u8: case GType::i8: case GType::boolean: return 1;
    case GType::u16: case GType::i16: return 2;
    case GType::u32: case GType::i32: case GType::f32: return 4;
    case GType::u64: case GType::i64: case GType::f64: case GType::string: return 8;
    case GType::array: return 12;
  }
  return 1;
}

MetaValue read_value(Cursor& c, MetaType t, const std::string& key, int depth);

MetaValue read_array(Cursor& c, const std::string& key, int depth) {
  if (depth >= kMaxArrayNesting)
    c.fail("metadata " + quoted(key) + " nests arrays more than " + std::to_string(kMaxArrayNesting) + " deep");
  const uint32_t tid = c.read<uint32_t>("an array's element type");
  const auto et = meta_type_of_gtype(tid);
  if (!et) c.fail("metadata " + quoted(key) + " is an array of unknown value type " + std::to_string(tid));
  const uint64_t n = c.read<uint64_t>("an array's length");
  if (n > c.remaining() / min_size(gtype_of(*et)))
    c.fail("metadata " + quoted(key) + " claims an array of " + std::to_string(n) +
           " elements, more than the rest of the file can hold");
  MetaArray a;
  a.type = *et;
  a.items.reserve(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n; ++i) a.items.push_back(read_value(c, *et, key, depth + 1));
  return a;
}

MetaValue read_value(Cursor& c, MetaType t, const std::string& key, int depth) {
  switch (t) {
    case MetaType::u8: return c.read<uint8_t>("a u8 value");
    case MetaType::i8: return c.read<int8_t>("an i8 value");
    case MetaType::u16: return c.read<uint16_t>("a u16 value");
    case MetaType::i16: return c.read<int16_t>("an i16 value");
    case MetaType::u32: return c.read<uint32_t>("a u32 value");
    case MetaType::i32: return c.read<int32_t>("an i32 value");
    case MetaType::u64: return c.read<uint64_t>("a u64 value");
    case MetaType::i64: return c.read<int64_t>("an i64 value");
    case MetaType::f32: return c.read<float>("an f32 value");
    case MetaType::f64: return c.read<double>("an f64 value");
    case MetaType::boolean: {
      const uint8_t b = c.read<uint8_t>("a bool value");
      if (b > 1) c.fail("metadata " + quoted(key) + " has a bool value of " + std::to_string(b) + " (must be 0 or 1)");
      return b == 1;
    }
    case MetaType::string: return c.string("a string value");
    case MetaType::array: return read_array(c, key, depth);
  }
  c.fail("metadata " + quoted(key) + " has an unknown type");
}

}  // namespace

GType gtype_of(MetaType t) {
  switch (t) {
    case MetaType::u8: return GType::u8;
    case MetaType::i8: return GType::i8;
    case MetaType::u16: return GType::u16;
    case MetaType::i16: return GType::i16;
    case MetaType::u32: return GType::u32;
    case MetaType::i32: return GType::i32;
    case MetaType::u64: return GType::u64;
    case MetaType::i64: return GType::i64;
    case MetaType::f32: return GType::f32;
    case MetaType::f64: return GType::f64;
    case MetaType::boolean: return GType::boolean;
    case MetaType::string: return GType::string;
    case MetaType::array: return GType::array;
  }
  return GType::u8;
}

std::optional<MetaType> meta_type_of_gtype(uint32_t id) {
  constexpr MetaType map[] = {MetaType::u8,  MetaType::i8,      MetaType::u16,    MetaType::i16,   MetaType::u32,
                              MetaType::i32, MetaType::f32,     MetaType::boolean, MetaType::string, MetaType::array,
                              MetaType::u64, MetaType::i64,     MetaType::f64};
  if (id >= sizeof(map) / sizeof(map[0])) return std::nullopt;
  return map[id];
}

Result<File> parse(std::span<const std::byte> bytes, const std::string& name) {
  try {
    Cursor c(bytes, name);
    File f;
    if (bytes.size() < 4 || std::memcmp(bytes.data(), "GGUF", 4) != 0) {
      std::string head(reinterpret_cast<const char*>(bytes.data()), std::min<size_t>(4, bytes.size()));
      c.fail("not a GGUF file (it starts with " + quoted(head) + ", not 'GGUF')");
    }
    c.read<uint32_t>("the magic");
    f.version = c.read<uint32_t>("the version");
    if (f.version == 1)
      c.fail("GGUF version 1 is not supported (only 2 and 3); re-convert the model with a current llama.cpp");
    if (f.version != 2 && f.version != 3)
      c.fail("GGUF version " + std::to_string(f.version) + " is not supported (only 2 and 3)");
    const uint64_t n_tensors = c.read<uint64_t>("the tensor count");
    const uint64_t n_kv = c.read<uint64_t>("the metadata count");
    // Each metadata entry takes at least 12 bytes (key length + type), each tensor info 24.
    if (n_kv > c.remaining() / 12)
      c.fail("the header claims " + std::to_string(n_kv) + " metadata entries, more than a file of " +
             std::to_string(bytes.size()) + " bytes can hold");
    if (n_tensors > c.remaining() / 24)
      c.fail("the header claims " + std::to_string(n_tensors) + " tensors, more than a file of " +
             std::to_string(bytes.size()) + " bytes can hold");

    std::unordered_set<std::string> keys;
    f.kv.reserve(static_cast<size_t>(n_kv));
    for (uint64_t i = 0; i < n_kv; ++i) {
      std::string key = c.name("a metadata key", "metadata key", "GGUF keys must be UTF-8, so the file is damaged or its converter is broken");
      if (!keys.insert(key).second) c.fail("duplicate metadata key " + quoted(key));
      const uint32_t tid = c.read<uint32_t>("a metadata value type");
      const auto t = meta_type_of_gtype(tid);
      if (!t) c.fail("metadata " + quoted(key) + " has unknown value type " + std::to_string(tid));
      MetaValue v = read_value(c, *t, key, 0);
      if (key == "general.alignment") {
        const auto* a = std::get_if<uint32_t>(&v);
        if (!a || *a == 0 || (*a & (*a - 1)) != 0)
          c.fail("'general.alignment' must be a u32 power of two, got " +
                 (a ? std::to_string(*a) : std::string("a ") + meta_type_name(*t)));
        f.alignment = *a;
      }
      f.kv.emplace_back(std::move(key), std::move(v));
    }

    std::unordered_set<std::string> names;
    f.tensors.reserve(static_cast<size_t>(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
      TensorInfo t;
      t.desc.name = c.name("a tensor name", "tensor name", "GGUF tensor names must be UTF-8, so the file is damaged or its converter is broken");
      if (t.desc.name.empty()) c.fail("tensor " + std::to_string(i) + " has an empty name");
      if (!names.insert(t.desc.name).second) c.fail("duplicate tensor name " + quoted(t.desc.name));
      const std::string tn = "tensor " + quoted(t.desc.name);
      const uint32_t n_dims = c.read<uint32_t>("a tensor's dimension count");
      if (n_dims > static_cast<uint32_t>(kMaxDims))
        c.fail(tn + " has " + std::to_string(n_dims) + " dimensions; GGUF allows at most " + std::to_string(kMaxDims));
      for (uint32_t d = 0; d < n_dims; ++d) {
        const uint64_t ne = c.read<uint64_t>("a tensor dimension");
        if (ne > static_cast<uint64_t>(INT64_MAX)) c.fail(tn + " has an impossible dimension " + std::to_string(ne));
        t.desc.shape.push_back(static_cast<int64_t>(ne));
      }
      const uint32_t type_id = c.read<uint32_t>("a tensor type");
      const auto* info = storage_type_info(type_id);
      if (!info || !info->in_gguf)
        c.fail(tn + " has unknown storage type " + std::to_string(type_id) +
               " (this Switchyard reads GGUF types up to MXFP4; a newer llama.cpp may have written it)");
      t.desc.type = info->type;
      if (!t.desc.shape.empty() && t.desc.shape[0] % info->block_size != 0)
        c.fail(tn + " has rows of " + std::to_string(t.desc.shape[0]) + " elements, not a multiple of " +
               std::string(info->name) + "'s block size " + std::to_string(info->block_size));
      const auto size = tensor_bytes(t.desc.type, t.desc.shape);
      if (!size) c.fail(tn + " is too large: its size overflows 64 bits");
      // A zero dimension makes the size 0 whatever the others are, but the loader still
      // computes every stride (signed 64-bit): those must fit too.
      auto spanned = t.desc.shape;
      for (auto& ne : spanned) ne = std::max<int64_t>(ne, 1);
      const auto span_bytes = tensor_bytes(t.desc.type, spanned);
      if (!span_bytes || *span_bytes > static_cast<uint64_t>(INT64_MAX))
        c.fail(tn + " is too large: the strides of its dimensions overflow 64 bits");
      t.desc.bytes = *size;
      t.offset = c.read<uint64_t>("a tensor data offset");
      if (t.offset % f.alignment != 0)
        c.fail(tn + " has data offset " + std::to_string(t.offset) + ", not a multiple of the alignment " +
               std::to_string(f.alignment));
      f.tensors.push_back(std::move(t));
    }

    const uint64_t header_end = c.pos();
    f.data_offset = (header_end + f.alignment - 1) / f.alignment * f.alignment;
    const uint64_t data_size = bytes.size() >= f.data_offset ? bytes.size() - f.data_offset : 0;
    if (!f.tensors.empty() && bytes.size() < f.data_offset)
      c.fail("the file is truncated: it ends at " + std::to_string(bytes.size()) +
             " bytes, before its data section starts at " + std::to_string(f.data_offset));
    for (const auto& t : f.tensors)
      if (t.offset > data_size || t.desc.bytes > data_size - t.offset)
        c.fail("the file is truncated or corrupt: tensor " + quoted(t.desc.name) + " (" + std::to_string(t.desc.bytes) +
               " bytes at data offset " + std::to_string(t.offset) + ") extends past the end of the data section (" +
               std::to_string(data_size) + " bytes)");
    // Overlap check in offset order; zero-sized tensors overlap nothing.
    std::vector<const TensorInfo*> by_offset;
    for (const auto& t : f.tensors)
      if (t.desc.bytes > 0) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i)
      if (by_offset[i - 1]->offset + by_offset[i - 1]->desc.bytes > by_offset[i]->offset)
        c.fail("tensors " + quoted(by_offset[i - 1]->desc.name) + " and " + quoted(by_offset[i]->desc.name) +
               " overlap in the data section");
    return f;
  } catch (const ParseError& e) {
    return error::corrupt(e.what());
  } catch (const std::bad_alloc&) {
    return error::out_of_memory(name + ": out of memory while reading the header");
  }
}

}  // namespace sy::gguf
