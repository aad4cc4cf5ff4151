#include "switchyard/params.hpp"

#include <array>
#include <sstream>

namespace sy {
namespace {
constexpr std::array<std::pair<ParamType, std::string_view>, 6> kNames{{
    {ParamType::boolean, "boolean"},
    {ParamType::integer, "integer"},
    {ParamType::number, "number"},
    {ParamType::string, "string"},
    {ParamType::integer_list, "integer list"},
    {ParamType::string_list, "string list"},
}};
}  // namespace

std::string_view param_type_name(ParamType t) noexcept {
  for (const auto& [k, n] : kNames)
    if (k == t) return n;
  return "?";
}

std::optional<ParamType> param_type_from_name(std::string_view name) noexcept {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

const ParamValue* ParamMap::find(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

std::optional<bool> ParamMap::get_bool(std::string_view name) const {
  const auto* v = find(name);
  if (const auto* b = v ? std::get_if<bool>(v) : nullptr) return *b;
  return std::nullopt;
}

std::optional<int64_t> ParamMap::get_int(std::string_view name) const {
  const auto* v = find(name);
  if (const auto* i = v ? std::get_if<int64_t>(v) : nullptr) return *i;
  return std::nullopt;
}

std::optional<double> ParamMap::get_number(std::string_view name) const {
  const auto* v = find(name);
  if (!v) return std::nullopt;
  if (const auto* d = std::get_if<double>(v)) return *d;
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<std::string> ParamMap::get_string(std::string_view name) const {
  const auto* v = find(name);
  if (const auto* s = v ? std::get_if<std::string>(v) : nullptr) return *s;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> ParamMap::get_int_list(std::string_view name) const {
  const auto* v = find(name);
  if (const auto* l = v ? std::get_if<std::vector<int64_t>>(v) : nullptr) return *l;
  return std::nullopt;
}

std::optional<std::vector<std::string>> ParamMap::get_string_list(std::string_view name) const {
  const auto* v = find(name);
  if (const auto* l = v ? std::get_if<std::vector<std::string>>(v) : nullptr) return *l;
  return std::nullopt;
}

std::string param_value_to_string(const ParamValue& v) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, bool>) {
          os << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<X, std::vector<int64_t>> || std::is_same_v<X, std::vector<std::string>>) {
          os << '[';
          for (size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << x[i];
          os << ']';
        } else {
          os << x;
        }
      },
      v);
  return os.str();
}

}  // namespace sy
