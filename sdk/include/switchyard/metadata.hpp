// Typed model metadata (GGUF key/value pairs, or what a format derives from config.json).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sy {

/// Kind of a metadata value, in the order of MetaValue's alternatives
/// (so `static_cast<MetaType>(value.index())` gives it).
enum class MetaType : uint8_t { u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, boolean, string, array };

struct MetaArray;

/// One metadata value. Integers keep their width so a writer can round-trip them.
using MetaValue = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, uint64_t, int64_t,
                               float, double, bool, std::string, MetaArray>;

/// Kind of a value.
inline MetaType meta_type_of(const MetaValue& v);

/// An array value: homogeneous (every item of `type`), possibly nested. The element type
/// is kept even when the array is empty, so a writer can reproduce it.
struct MetaArray {
  MetaType type = MetaType::u8;
  std::vector<MetaValue> items;
};

/// "u32", "string", "array", ... for messages and `inspect`.
const char* meta_type_name(MetaType t) noexcept;

/// Key/value metadata with typed accessors that accept any integer width.
class Metadata {
 public:
  /// Adds or replaces a key.
  void set(std::string key, MetaValue value);
  /// The raw value for a key, or nullptr.
  [[nodiscard]] const MetaValue* find(std::string_view key) const;
  /// True when the key exists.
  [[nodiscard]] bool contains(std::string_view key) const { return find(key) != nullptr; }
  /// Integer value (any width, or a bool); nullopt when missing, not an integer, or out of int64 range.
  [[nodiscard]] std::optional<int64_t> get_int(std::string_view key) const;
  /// Floating value (f32, f64 or an integer); nullopt when missing or not numeric.
  [[nodiscard]] std::optional<double> get_float(std::string_view key) const;
  /// String value; nullopt when missing or not a string.
  [[nodiscard]] std::optional<std::string> get_string(std::string_view key) const;
  /// Boolean value; nullopt when missing or not a bool.
  [[nodiscard]] std::optional<bool> get_bool(std::string_view key) const;
  /// A hyper-parameter that is either one integer for all layers or one per layer
  /// (e.g. "{arch}.attention.head_count_kv"): the value for `layer`, or nullopt when
  /// missing, non-integer, or the array is shorter than layer+1.
  [[nodiscard]] std::optional<int64_t> get_per_layer_int(std::string_view key, size_t layer) const;
  /// All entries in key order.
  [[nodiscard]] const std::map<std::string, MetaValue, std::less<>>& entries() const { return entries_; }
  /// Number of keys.
  [[nodiscard]] size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, MetaValue, std::less<>> entries_;
};

inline MetaType meta_type_of(const MetaValue& v) { return static_cast<MetaType>(v.index()); }

/// Integer view of a value (any width or bool), nullopt otherwise.
std::optional<int64_t> meta_as_int(const MetaValue& v);

}  // namespace sy
