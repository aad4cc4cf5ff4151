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

struct MetaArray;

/// One metadata value. Integers keep their width so a writer can round-trip them.
using MetaValue = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, uint64_t, int64_t,
                               float, double, bool, std::string, MetaArray>;

/// An array value: homogeneous, possibly nested.
struct MetaArray {
  std::vector<MetaValue> items;
};

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

/// Integer view of a value (any width or bool), nullopt otherwise.
std::optional<int64_t> meta_as_int(const MetaValue& v);

}  // namespace sy
