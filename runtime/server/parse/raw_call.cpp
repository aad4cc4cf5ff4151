#include "server/parse/raw_call.hpp"

namespace sy::server {

std::optional<nlohmann::ordered_json> arguments_object(const nlohmann::ordered_json* value) {
  if (!value || value->is_null()) return nlohmann::ordered_json::object();
  if (value->is_object()) return *value;
  if (value->is_string()) {
    const auto& s = value->get_ref<const std::string&>();
    auto inner = nlohmann::ordered_json::parse(s, nullptr, false);
    if (!inner.is_discarded() && inner.is_object()) return inner;
  }
  return std::nullopt;
}

std::optional<RawCall> call_from_object(const nlohmann::ordered_json& object) {
  if (!object.is_object()) return std::nullopt;
  const auto name = object.find("name");
  if (name == object.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return std::nullopt;
  const nlohmann::ordered_json* args = nullptr;
  for (const char* key : {"arguments", "parameters"})
    if (const auto it = object.find(key); it != object.end()) {
      args = &*it;
      break;
    }
  auto a = arguments_object(args);
  if (!a) return std::nullopt;
  return RawCall{name->get<std::string>(), std::move(*a)};
}

std::optional<RawCalls> calls_from_json(const nlohmann::ordered_json& value) {
  RawCalls calls;
  if (value.is_object()) {
    auto c = call_from_object(value);
    if (!c) return std::nullopt;
    calls.push_back(std::move(*c));
    return calls;
  }
  if (!value.is_array() || value.empty()) return std::nullopt;
  for (const auto& item : value) {
    auto c = call_from_object(item);
    if (!c) return std::nullopt;
    calls.push_back(std::move(*c));
  }
  return calls;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':';
}

}  // namespace sy::server
