// Typed parameter schemas: every component declares its parameters so a pipeline can be
// checked (type, range, choices, did-you-mean) before any plugin library is loaded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sy {

enum class ParamType : uint32_t {
  boolean,      ///< true / false
  integer,      ///< int64 within [min, max]; may also accept listed string keywords
  number,       ///< double within [min, max]
  string,       ///< free text; with choices it is an enumeration
  integer_list, ///< list of int64, each within [min, max]
  string_list,  ///< list of strings
};

/// Spelling of a ParamType in manifests and messages ("integer", "string list", ...).
std::string_view param_type_name(ParamType t) noexcept;
/// Inverse of param_type_name.
std::optional<ParamType> param_type_from_name(std::string_view name) noexcept;

/// A parameter value after validation.
using ParamValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>, std::vector<std::string>>;

/// One declared parameter of a component.
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::string;
  std::string doc;                   ///< one sentence for docs and --help
  std::optional<ParamValue> def;     ///< default; nullopt = required unless `optional`
  bool optional = false;             ///< may be absent without a default
  std::optional<double> min, max;    ///< range for numbers and integers (inclusive unless below)
  bool min_exclusive = false;        ///< the value must be strictly greater than min, e.g. top_p in (0, 1]
  std::vector<std::string> choices;  ///< allowed strings (enumeration, or keywords for integers)
  bool primary = false;              ///< receives the value in the shorthand `{ name: value }`
  /// ECMAScript regular expression every string value (or string-list item) must match in
  /// full; empty: any text.
  std::string pattern;
  /// What a valid value looks like, for messages: "TOKEN_ID:BIAS such as '15043:+2.5'".
  std::string pattern_hint;
  /// The value names token ids (an integer is an id; a string starts with an id before ':'),
  /// so it can be checked against the model's vocabulary.
  bool token_ids = false;
};

/// Validated parameters handed to a component factory: every declared parameter that has
/// a value or a default is present, with the declared type.
class ParamMap {
 public:
  /// Sets a value.
  void set(std::string name, ParamValue v) { values_[std::move(name)] = std::move(v); }
  /// The value, or nullptr when absent.
  [[nodiscard]] const ParamValue* find(std::string_view name) const;
  /// Typed getters: nullopt when absent or of another type.
  [[nodiscard]] std::optional<bool> get_bool(std::string_view name) const;
  [[nodiscard]] std::optional<int64_t> get_int(std::string_view name) const;
  /// A number; integers are widened.
  [[nodiscard]] std::optional<double> get_number(std::string_view name) const;
  [[nodiscard]] std::optional<std::string> get_string(std::string_view name) const;
  [[nodiscard]] std::optional<std::vector<int64_t>> get_int_list(std::string_view name) const;
  [[nodiscard]] std::optional<std::vector<std::string>> get_string_list(std::string_view name) const;
  /// All values by name.
  [[nodiscard]] const std::map<std::string, ParamValue, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, ParamValue, std::less<>> values_;
};

/// Human spelling of a value ("0.95", "true", "[0, 1]", "auto").
std::string param_value_to_string(const ParamValue& v);

}  // namespace sy
