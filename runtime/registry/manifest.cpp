#include "registry/manifest.hpp"

#include "types/table.hpp"

#include <algorithm>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "util/read_file.hpp"

namespace sy::registry {
namespace {

using nlohmann::json;

json value_to_json(const ParamValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

std::optional<ParamValue> value_from_json(const json& j, ParamType t) {
  switch (t) {
    case ParamType::boolean:
      if (j.is_boolean()) return ParamValue(j.get<bool>());
      break;
    case ParamType::integer:
      if (j.is_number_integer()) return ParamValue(j.get<int64_t>());
      if (j.is_string()) return ParamValue(j.get<std::string>());  // keyword such as "auto"
      break;
    case ParamType::number:
      if (j.is_number()) return ParamValue(j.get<double>());
      break;
    case ParamType::string:
      if (j.is_string()) return ParamValue(j.get<std::string>());
      break;
    case ParamType::integer_list:
      if (j.is_array() && std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_number_integer(); }))
        return ParamValue(j.get<std::vector<int64_t>>());
      break;
    case ParamType::string_list:
      if (j.is_array() && std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_string(); }))
        return ParamValue(j.get<std::vector<std::string>>());
      break;
  }
  return std::nullopt;
}

json param_to_json(const ParamSpec& p) {
  json j{{"name", p.name}, {"type", std::string(param_type_name(p.type))}, {"doc", p.doc}};
  if (p.def) j["default"] = value_to_json(*p.def);
  if (p.optional) j["optional"] = true;
  if (p.min) j["min"] = *p.min;
  if (p.max) j["max"] = *p.max;
  if (p.min_exclusive) j["min_exclusive"] = true;
  if (!p.choices.empty()) j["choices"] = p.choices;
  if (p.primary) j["primary"] = true;
  if (!p.pattern.empty()) j["pattern"] = p.pattern;
  if (!p.pattern_hint.empty()) j["pattern_hint"] = p.pattern_hint;
  if (p.token_ids) j["token_ids"] = true;
  return j;
}

const char* kind_names[] = {"format", "backend", "sampler"};

// Throws std::runtime_error with a field path; the caller turns it into a Status.
struct Reader {
  const std::string& source;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw std::runtime_error(source + ": field '" + field + "' " + what);
  }
  const json& member(const json& obj, const std::string& key, const std::string& path) const {
    if (!obj.is_object()) fail(path, "must be an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path + "." + key, "is missing");
    return *it;
  }
  std::string str(const json& obj, const std::string& key, const std::string& path) const {
    const auto& v = member(obj, key, path);
    if (!v.is_string()) fail(path + "." + key, "must be a string");
    return v.get<std::string>();
  }
  // Optional members: absent gives the fallback; present with another type is an error.
  bool opt_bool(const json& obj, const std::string& key, const std::string& path) const {
    auto it = obj.find(key);
    if (it == obj.end()) return false;
    if (!it->is_boolean()) fail(path + "." + key, "must be true or false");
    return it->get<bool>();
  }
  std::string opt_str(const json& obj, const std::string& key, const std::string& path) const {
    auto it = obj.find(key);
    if (it == obj.end()) return {};
    if (!it->is_string()) fail(path + "." + key, "must be a string");
    return it->get<std::string>();
  }
  std::vector<std::string> opt_strings(const json& obj, const std::string& key, const std::string& path) const {
    auto it = obj.find(key);
    if (it == obj.end()) return {};
    if (!it->is_array() || !std::all_of(it->begin(), it->end(), [](const json& e) { return e.is_string(); }))
      fail(path + "." + key, "must be an array of strings");
    return it->get<std::vector<std::string>>();
  }
  int64_t integer(const json& obj, const std::string& key, const std::string& path) const {
    const auto& v = member(obj, key, path);
    if (!v.is_number_integer()) fail(path + "." + key, "must be an integer");
    return v.get<int64_t>();
  }
};

ParamSpec param_from_json(const Reader& r, const json& j, const std::string& path) {
  ParamSpec p;
  p.name = r.str(j, "name", path);
  const std::string tname = r.str(j, "type", path);
  auto t = param_type_from_name(tname);
  if (!t) r.fail(path + ".type", "names an unknown parameter type '" + tname + "'");
  p.type = *t;
  p.doc = r.str(j, "doc", path);
  if (j.contains("default")) {
    p.def = value_from_json(j["default"], p.type);
    if (!p.def) r.fail(path + ".default", "does not have the declared type " + tname);
  }
  p.optional = j.value("optional", false);
  if (j.contains("min")) p.min = j["min"].get<double>();
  if (j.contains("max")) p.max = j["max"].get<double>();
  p.min_exclusive = j.value("min_exclusive", false);
  if (j.contains("choices")) p.choices = j["choices"].get<std::vector<std::string>>();
  p.primary = j.value("primary", false);
  p.pattern = r.opt_str(j, "pattern", path);
  if (!p.pattern.empty()) {
    // Checked here, so validating a pipeline never meets a pattern it cannot compile.
    try {
      std::regex re(p.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      r.fail(path + ".pattern", std::string("is not a valid ECMAScript regular expression (") + e.what() +
                                    "); fix the plugin's ParamSpec::pattern and rebuild it");
    }
  }
  p.pattern_hint = r.opt_str(j, "pattern_hint", path);
  p.token_ids = r.opt_bool(j, "token_ids", path);
  return p;
}

}  // namespace

bool ComponentManifest::has_trait(std::string_view trait) const {
  return std::find(traits.begin(), traits.end(), trait) != traits.end();
}

const ParamSpec* ComponentManifest::param(std::string_view pname) const {
  for (const auto& p : params)
    if (p.name == pname) return &p;
  return nullptr;
}

Manifest manifest_from_descriptor(const PluginDescriptor& d, const std::string& library, const StorageTypeTable* types) {
  Manifest m;
  m.library = library;
  m.abi_major = d.abi_major;
  m.abi_minor = d.abi_minor;
  m.abi_tag = d.abi_tag;
  m.name = d.name;
  m.version = d.version;
  m.summary = d.summary;
  for (const auto& c : d.components)
    m.components.push_back({c.kind, c.name, c.version, c.rank, c.summary, c.cpu_features, c.params, c.traits});
  // A table that cannot be read safely lists nothing here; loading the plugin then fails
  // with the reason (types::TypeRegistry::add).
  if (types && !types::table_problem(*types))
    for (uint32_t i = 0; i < types->count; ++i) {
      const auto& t = types::table_entry(*types, i);
      m.storage_types.push_back({t.name ? t.name : "", t.block_size, t.block_bytes, t.group_size,
                                 (t.flags & kStorageQuantized) != 0, t.quantize_row != nullptr,
                                 t.repack_to ? t.repack_to : ""});
    }
  return m;
}

namespace {
json storage_type_to_json(const StorageTypeManifest& t) {
  return {{"name", t.name},           {"block_size", t.block_size}, {"block_bytes", t.block_bytes},
          {"group_size", t.group_size}, {"quantized", t.quantized},   {"quantize", t.quantize},
          {"repack_to", t.repack_to}};
}
}  // namespace

nlohmann::json component_to_json(const ComponentManifest& c) {
  json params = json::array();
  for (const auto& p : c.params) params.push_back(param_to_json(p));
  return {{"kind", std::string(component_kind_name(c.kind))},
          {"name", c.name},
          {"version", c.version},
          {"rank", c.rank},
          {"summary", c.summary},
          {"cpu_features", c.cpu_features},
          {"traits", c.traits},
          {"params", params}};
}

nlohmann::json manifest_to_json(const Manifest& m) {
  json comps = json::array();
  for (const auto& c : m.components) comps.push_back(component_to_json(c));
  json j{{"switchyard_manifest", kManifestVersion},
         {"library", m.library},
         {"plugin", {{"name", m.name}, {"version", m.version}, {"summary", m.summary}}},
         {"abi", {{"major", m.abi_major}, {"minor", m.abi_minor}, {"tag", m.abi_tag}}},
         {"components", comps}};
  // Written only when there are types, so manifests of plugins without any stay as they were.
  if (!m.storage_types.empty()) {
    json types = json::array();
    for (const auto& t : m.storage_types) types.push_back(storage_type_to_json(t));
    j["storage_types"] = types;
  }
  return j;
}

Result<Manifest> manifest_from_json_text(const std::string& text, const std::string& source) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return error::corrupt(source + ": not valid JSON; rebuild the plugin to regenerate its manifest");
  Reader r{source};
  try {
    Manifest m;
    const auto version = r.integer(j, "switchyard_manifest", "");
    if (version != kManifestVersion)
      r.fail("switchyard_manifest", "is " + std::to_string(version) + ", but this Switchyard reads version " +
                                        std::to_string(kManifestVersion));
    m.library = r.str(j, "library", "");
    const auto& plugin = r.member(j, "plugin", "");
    m.name = r.str(plugin, "name", "plugin");
    m.version = r.str(plugin, "version", "plugin");
    m.summary = plugin.value("summary", "");
    const auto& abi = r.member(j, "abi", "");
    m.abi_major = static_cast<uint32_t>(r.integer(abi, "major", "abi"));
    m.abi_minor = static_cast<uint32_t>(r.integer(abi, "minor", "abi"));
    m.abi_tag = r.str(abi, "tag", "abi");
    const auto& comps = r.member(j, "components", "");
    if (!comps.is_array()) r.fail("components", "must be an array");
    for (size_t i = 0; i < comps.size(); ++i) {
      const std::string path = "components[" + std::to_string(i) + "]";
      const auto& cj = comps[i];
      ComponentManifest c;
      const std::string kind = r.str(cj, "kind", path);
      bool known = false;
      for (int k = 0; k < 3; ++k)
        if (kind == kind_names[k]) {
          c.kind = static_cast<ComponentKind>(k);
          known = true;
        }
      if (!known) r.fail(path + ".kind", "is '" + kind + "'; expected format, backend or sampler");
      c.name = r.str(cj, "name", path);
      c.version = r.str(cj, "version", path);
      c.rank = static_cast<int>(r.integer(cj, "rank", path));
      c.summary = cj.value("summary", "");
      if (cj.contains("cpu_features")) c.cpu_features = cj["cpu_features"].get<std::vector<std::string>>();
      c.traits = r.opt_strings(cj, "traits", path);
      const auto& params = r.member(cj, "params", path);
      if (!params.is_array()) r.fail(path + ".params", "must be an array");
      for (size_t p = 0; p < params.size(); ++p)
        c.params.push_back(param_from_json(r, params[p], path + ".params[" + std::to_string(p) + "]"));
      m.components.push_back(std::move(c));
    }
    if (j.contains("storage_types")) {
      const auto& types = j["storage_types"];
      if (!types.is_array()) r.fail("storage_types", "must be an array");
      for (size_t i = 0; i < types.size(); ++i) {
        const std::string path = "storage_types[" + std::to_string(i) + "]";
        const auto& tj = types[i];
        StorageTypeManifest t;
        t.name = r.str(tj, "name", path);
        t.block_size = static_cast<uint32_t>(r.integer(tj, "block_size", path));
        t.block_bytes = static_cast<uint32_t>(r.integer(tj, "block_bytes", path));
        t.group_size = static_cast<uint32_t>(tj.value("group_size", 0));
        t.quantized = tj.value("quantized", false);
        t.quantize = tj.value("quantize", false);
        t.repack_to = tj.value("repack_to", "");
        m.storage_types.push_back(std::move(t));
      }
    }
    return m;
  } catch (const std::exception& e) {
    return error::corrupt(e.what());
  }
}

Result<Manifest> read_manifest(const std::filesystem::path& path) {
  // Manifests are a few KiB; a larger one is not a manifest.
  auto text = util::read_file(path, "plugin manifest", uint64_t{16} << 20);
  if (!text) return text.status();
  return manifest_from_json_text(*text, path.string());
}

Status write_manifest(const Manifest& m, const std::filesystem::path& path) {
  const auto tmp = std::filesystem::path(path.string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return error::io_error("cannot write " + tmp.string());
    out << manifest_to_json(m).dump(2) << '\n';
    if (!out.flush()) return error::io_error("cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return error::io_error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  return Status::ok();
}

std::optional<std::string> manifest_difference(const Manifest& a, const Manifest& b) {
  if (a.name != b.name) return "plugin name '" + a.name + "' vs '" + b.name + "'";
  if (a.version != b.version) return "plugin version " + a.version + " vs " + b.version;
  if (a.abi_major != b.abi_major || a.abi_minor != b.abi_minor || a.abi_tag != b.abi_tag)
    return "ABI " + std::to_string(a.abi_major) + "." + std::to_string(a.abi_minor) + " (" + a.abi_tag + ") vs " +
           std::to_string(b.abi_major) + "." + std::to_string(b.abi_minor) + " (" + b.abi_tag + ")";
  const auto label = [](const ComponentManifest& c) {
    return std::string(component_kind_name(c.kind)) + " '" + c.name + "'";
  };
  auto find = [](const Manifest& m, const ComponentManifest& c) -> const ComponentManifest* {
    for (const auto& x : m.components)
      if (x.kind == c.kind && x.name == c.name) return &x;
    return nullptr;
  };
  for (const auto& c : a.components)
    if (!find(b, c)) return "the manifest lists " + label(c) + " but the library does not provide it";
  for (const auto& c : b.components)
    if (!find(a, c)) return "the library provides " + label(c) + " but the manifest does not list it";
  if (a.storage_types.size() != b.storage_types.size())
    return "the manifest lists " + std::to_string(a.storage_types.size()) + " storage types and the library declares " +
           std::to_string(b.storage_types.size());
  for (size_t i = 0; i < a.storage_types.size(); ++i)
    if (a.storage_types[i] != b.storage_types[i])
      return "storage type " + std::to_string(i) + " is '" + a.storage_types[i].name + "' in the manifest and '" +
             b.storage_types[i].name + "' in the library, or differs in its geometry, quantizer or repack target";
  const auto ja = manifest_to_json(a)["components"];
  const auto jb = manifest_to_json(b)["components"];
  for (const auto& ca : ja) {
    for (const auto& cb : jb) {
      if (ca["kind"] != cb["kind"] || ca["name"] != cb["name"]) continue;
      for (const auto& [key, val] : ca.items())
        if (!cb.contains(key) || cb.at(key) != val)
          return ca["kind"].get<std::string>() + " '" + ca["name"].get<std::string>() + "' differs in '" + key + "'";
    }
  }
  return std::nullopt;
}

std::filesystem::path manifest_path_for(const std::filesystem::path& library) {
  return std::filesystem::path(library.string() + ".json");
}

}  // namespace sy::registry
