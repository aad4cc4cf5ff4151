#include "switchyard/metadata.hpp"

#include <limits>

namespace sy {

const char* meta_type_name(MetaType t) noexcept {
  static const char* const names[] = {"u8",  "i8",  "u16", "i16",  "u32",    "i32",   "u64",
                                      "i64", "f32", "f64", "bool", "string", "array"};
  const auto i = static_cast<size_t>(t);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

void Metadata::set(std::string key, MetaValue value) { entries_.insert_or_assign(std::move(key), std::move(value)); }

const MetaValue* Metadata::find(std::string_view key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

std::optional<int64_t> meta_as_int(const MetaValue& v) {
  return std::visit(
      [](const auto& x) -> std::optional<int64_t> {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, bool>) {
          return x ? 1 : 0;
        } else if constexpr (std::is_same_v<X, uint64_t>) {
          if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
          return static_cast<int64_t>(x);
        } else if constexpr (std::is_integral_v<X>) {
          return static_cast<int64_t>(x);
        } else {
          return std::nullopt;
        }
      },
      v);
}

std::optional<int64_t> Metadata::get_int(std::string_view key) const {
  const auto* v = find(key);
  return v ? meta_as_int(*v) : std::nullopt;
}

std::optional<double> Metadata::get_float(std::string_view key) const {
  const auto* v = find(key);
  if (!v) return std::nullopt;
  if (const auto* f = std::get_if<float>(v)) return *f;
  if (const auto* d = std::get_if<double>(v)) return *d;
  if (std::holds_alternative<bool>(*v)) return std::nullopt;
  if (auto i = meta_as_int(*v)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<std::string> Metadata::get_string(std::string_view key) const {
  const auto* v = find(key);
  if (const auto* s = v ? std::get_if<std::string>(v) : nullptr) return *s;
  return std::nullopt;
}

std::optional<bool> Metadata::get_bool(std::string_view key) const {
  const auto* v = find(key);
  if (const auto* b = v ? std::get_if<bool>(v) : nullptr) return *b;
  return std::nullopt;
}

std::optional<int64_t> Metadata::get_per_layer_int(std::string_view key, size_t layer) const {
  const auto* v = find(key);
  if (!v) return std::nullopt;
  if (const auto* arr = std::get_if<MetaArray>(v)) {
    if (layer >= arr->items.size()) return std::nullopt;
    return meta_as_int(arr->items[layer]);
  }
  if (std::holds_alternative<bool>(*v)) return std::nullopt;
  return meta_as_int(*v);
}

}  // namespace sy
