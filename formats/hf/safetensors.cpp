#include "safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "names_text.hpp"

namespace sy::hf {
namespace {

using nlohmann::json;

// Nesting a header never needs (an entry is an object holding arrays); deeper is hostile.
constexpr int kMaxDepth = 4;

// Internal only: a failed check unwinds to parse_header(), which returns it as a Status.
struct Refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void refuse(const std::string& why) { throw Refusal(why); }

const char* kind_of(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "a fraction";
    default: return "a number";
  }
}

// A non-negative integer that fits int64, or nullopt.
std::optional<uint64_t> whole(const json& j) {
  if (j.is_number_unsigned()) {
    const auto v = j.get<uint64_t>();
    return v <= static_cast<uint64_t>(INT64_MAX) ? std::optional(v) : std::nullopt;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) return static_cast<uint64_t>(j.get<int64_t>());
  return std::nullopt;
}

std::string shape_text(const json& shape) { return quoted_text(shape.dump(), 60); }

StTensor read_entry(const std::string& name, const json& e, uint64_t data_bytes) {
  const std::string who = "tensor " + quoted_text(name);
  const std::string fix = "; the header is damaged, so download or write the file again";
  if (name.empty()) refuse("a tensor has an empty name" + fix);
  if (!e.is_object()) refuse(who + " is described by " + std::string(kind_of(e)) + ", not an object with dtype, shape and data_offsets" + fix);
  StTensor t;
  t.name = name;
  const auto dt = e.find("dtype");
  if (dt == e.end() || !dt->is_string()) refuse(who + " has no dtype string" + fix);
  const auto d = dtype_from_name(dt->get<std::string>());
  if (!d)
    refuse(who + " has dtype " + quoted_text(dt->get<std::string>()) + ", which safetensors does not define (known: " +
           known_dtypes() + "); the file was written by a newer tool or is damaged");
  t.dtype = *d;

  const auto sh = e.find("shape");
  if (sh == e.end() || !sh->is_array()) refuse(who + " has no shape array" + fix);
  uint64_t elements = 1;
  bool overflow = false;
  for (size_t i = 0; i < sh->size(); ++i) {
    const auto v = whole((*sh)[i]);
    if (!v)
      refuse(who + " has shape " + shape_text(*sh) + ": dimension " + std::to_string(i) + " is " +
             quoted_text((*sh)[i].dump(), 30) + "; dimensions must be non-negative integers" + fix);
    t.shape.push_back(static_cast<int64_t>(*v));
    if (*v != 0 && elements > UINT64_MAX / *v) overflow = true;
    elements *= *v;
  }
  if (std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end()) overflow = false, elements = 0;
  const uint64_t item = dtype_size(t.dtype);
  if (overflow || elements > UINT64_MAX / item)
    refuse(who + " has shape " + shape_text(*sh) + ", whose size overflows 64 bits" + fix);
  const uint64_t size = elements * item;

  const auto off = e.find("data_offsets");
  if (off == e.end() || !off->is_array() || off->size() != 2)
    refuse(who + " has no data_offsets pair [begin, end]" + fix);
  const auto b = whole((*off)[0]), en = whole((*off)[1]);
  if (!b || !en || *b > *en)
    refuse(who + " has data_offsets " + quoted_text(off->dump(), 60) +
           "; they must be two non-negative integers with begin <= end" + fix);
  if (*en > data_bytes)
    refuse(who + " has data_offsets [" + std::to_string(*b) + ", " + std::to_string(*en) +
           "], past the end of the data section (" + std::to_string(data_bytes) +
           " bytes); the file is truncated, so download it again");
  if (*en - *b != size)
    refuse(who + " is " + dtype_name(t.dtype) + " of shape " + shape_text(*sh) + ", which takes " +
           std::to_string(size) + " bytes, but its data_offsets [" + std::to_string(*b) + ", " + std::to_string(*en) +
           "] span " + std::to_string(*en - *b) + fix);
  t.begin = *b;
  t.bytes = size;
  return t;
}

}  // namespace

Result<StHeader> parse_header(std::span<const std::byte> bytes, const std::string& name) {
  try {
    if (bytes.size() < 8)
      return error::corrupt(name + " is not a safetensors file: it has " + std::to_string(bytes.size()) +
                            " bytes, fewer than the 8 of its header length; the download is incomplete");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
    if (n > kMaxHeaderBytes)
      return error::corrupt(name + ": the header length is " + std::to_string(n) + " bytes, more than the " +
                            std::to_string(kMaxHeaderBytes) +
                            " a safetensors header may have; the file is not safetensors or is damaged");
    if (n > bytes.size() - 8)
      return error::corrupt(name + ": the header length is " + std::to_string(n) + " bytes, but only " +
                            std::to_string(bytes.size() - 8) +
                            " follow it; the file is truncated or not safetensors, so download it again");
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8, static_cast<size_t>(n));
    if (text.empty() || text.front() != '{')
      return error::corrupt(name + ": the header does not start with '{' (it starts with " +
                            quoted_text(std::string(text.substr(0, 16)), 16) +
                            "); the file is not safetensors or is damaged");

    // Duplicate names and excessive nesting are refused while parsing: nlohmann keeps the
    // last of two equal keys, which would hide a tensor silently.
    std::set<std::string> names;
    const json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) {
      if (depth > kMaxDepth) refuse("the header nests values deeper than any safetensors header does");
      if (ev == json::parse_event_t::key && depth == 1 && !names.insert(parsed.get<std::string>()).second)
        refuse("tensor " + quoted_text(parsed.get<std::string>()) +
               " appears twice in the header; the file is damaged, so write it again");
      return true;
    };
    json h;
    try {
      h = json::parse(text, cb);
    } catch (const json::exception& e) {
      return error::corrupt(name + ": the header is not valid JSON (" + quoted_text(e.what(), 200) +
                            "); the file is damaged, so download it again");
    }
    if (!h.is_object()) return error::corrupt(name + ": the header is not a JSON object; the file is damaged");

    StHeader out;
    out.data_offset = 8 + n;
    const uint64_t data_bytes = bytes.size() - out.data_offset;
    for (const auto& [key, value] : h.items()) {
      if (key == "__metadata__") {
        if (!value.is_object())
          refuse("__metadata__ is " + std::string(kind_of(value)) + "; it must be an object of strings");
        for (const auto& [mk, mv] : value.items()) {
          if (!mv.is_string())
            refuse("__metadata__ entry " + quoted_text(mk) + " is " + kind_of(mv) +
                   "; safetensors metadata values must be strings");
          out.metadata[mk] = mv.get<std::string>();
        }
        continue;
      }
      out.tensors.push_back(read_entry(key, value, data_bytes));
    }
    // Overlap: after sorting by start, each non-empty tensor must begin at or after the end of
    // the previous one (empty tensors occupy nothing).
    std::vector<const StTensor*> order;
    for (const auto& t : out.tensors)
      if (t.bytes > 0) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const StTensor* a, const StTensor* b) { return a->begin < b->begin; });
    for (size_t i = 1; i < order.size(); ++i)
      if (order[i]->begin < order[i - 1]->begin + order[i - 1]->bytes)
        refuse("tensors " + quoted_text(order[i - 1]->name) + " and " + quoted_text(order[i]->name) +
               " overlap in the data section (data_offsets [" + std::to_string(order[i - 1]->begin) + ", " +
               std::to_string(order[i - 1]->begin + order[i - 1]->bytes) + "] and [" +
               std::to_string(order[i]->begin) + ", " + std::to_string(order[i]->begin + order[i]->bytes) +
               "]); the header is damaged, so write the file again");
    for (auto& t : out.tensors) t.begin += out.data_offset;
    return out;
  } catch (const Refusal& r) {
    return error::corrupt(name + ": " + r.what());
  } catch (const std::exception& e) {
    return error::internal(name + ": reading the safetensors header failed: " + e.what());
  }
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::open(const std::filesystem::path& path) {
  auto map = gguf::MappedFile::open(path);
  if (!map) return map.status();
  auto h = parse_header((*map)->bytes(), path.string());
  if (!h) return h.status();
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->map_ = std::move(*map);
  f->header_ = std::move(*h);
  for (size_t i = 0; i < f->header_.tensors.size(); ++i) f->index_.emplace(f->header_.tensors[i].name, i);
  return f;
}

const StTensor* SafetensorsFile::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

}  // namespace sy::hf
