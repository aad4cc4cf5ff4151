#include "server/parse/param_types.hpp"

#include <algorithm>

namespace sy::server {

namespace {

const nlohmann::json* find_function(const nlohmann::json& tools, std::string_view name) {
  if (!tools.is_array()) return nullptr;
  for (const auto& tool : tools) {
    // Templates accept a tool with or without the {"type": "function", "function": ...} wrapper.
    const nlohmann::json* f = &tool;
    if (tool.is_object() && tool.contains("function") && tool["function"].is_object()) f = &tool["function"];
    if (f->is_object() && f->contains("name") && (*f)["name"].is_string() && (*f)["name"].get<std::string>() == name)
      return f;
  }
  return nullptr;
}

std::string_view trimmed(std::string_view s) {
  const auto ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// The text as JSON, or a discarded value.
nlohmann::ordered_json as_json(std::string_view text) {
  return nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, false);
}

bool fits(const nlohmann::ordered_json& v, std::string_view type) {
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return false;
}

}  // namespace

std::vector<std::string> declared_types(const nlohmann::json& tools, std::string_view function,
                                        std::string_view param) {
  const nlohmann::json* f = find_function(tools, function);
  if (!f || !f->contains("parameters")) return {};
  const auto& params = (*f)["parameters"];
  if (!params.is_object() || !params.contains("properties") || !params["properties"].is_object()) return {};
  const auto& props = params["properties"];
  const auto it = props.find(std::string(param));
  if (it == props.end() || !it->is_object()) return {};
  std::vector<std::string> types;
  if (it->contains("type")) {
    const auto& t = (*it)["type"];
    if (t.is_string()) types.push_back(t.get<std::string>());
    if (t.is_array())
      for (const auto& one : t)
        if (one.is_string()) types.push_back(one.get<std::string>());
  } else if (it->contains("enum") && (*it)["enum"].is_array() && !(*it)["enum"].empty() &&
             std::all_of((*it)["enum"].begin(), (*it)["enum"].end(), [](const auto& e) { return e.is_string(); })) {
    types.emplace_back("string");
  }
  return types;
}

nlohmann::ordered_json typed_value(std::string_view text, const std::vector<std::string>& types,
                                   bool python_literals) {
  const std::string_view t = trimmed(text);
  const auto declared = [&](std::string_view name) {
    return types.empty() || std::find(types.begin(), types.end(), name) != types.end();
  };
  if (python_literals && declared("null") && t == "None") return nullptr;
  if (python_literals && declared("boolean") && (t == "True" || t == "False")) return t == "True";
  if (types.empty()) {
    auto v = as_json(text);
    return v.is_discarded() ? nlohmann::ordered_json(std::string(text)) : v;
  }
  if (declared("null") && t == "null") return nullptr;
  if (declared("boolean") && (t == "true" || t == "false")) return t == "true";
  const auto v = as_json(text);
  if (!v.is_discarded())
    for (const auto& type : types)
      if (fits(v, type)) return v;
  if (declared("string")) return std::string(text);
  return v.is_discarded() ? nlohmann::ordered_json(std::string(text)) : v;
}

}  // namespace sy::server
