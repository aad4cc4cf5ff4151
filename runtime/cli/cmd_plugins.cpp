// switchyard plugins [--json] [--check] [--devices]: what is installed, from manifests
// alone; --check also loads every library and verifies it against its manifest; --devices
// starts every backend and lists its devices (memory, who reads what, features and the
// kernel paths each will use), or says in one line why a backend cannot start.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "registry/registry.hpp"
#include "types/type_registry.hpp"
#include "util/bytes.hpp"

namespace sy::cli {
namespace {

using nlohmann::json;

// A backend with its manifest's defaults, its devices' descriptions, or why it has none.
struct BackendDevices {
  std::string backend;
  std::string unavailable;  ///< empty when the backend started
  std::vector<DeviceInfo> devices;
};

std::vector<BackendDevices> probe_devices(registry::Registry& reg) {
  std::vector<BackendDevices> out;
  for (const auto& name : reg.names(ComponentKind::backend)) {
    BackendDevices b;
    b.backend = name;
    ParamMap params;
    for (const auto& p : reg.manifest(*reg.find(ComponentKind::backend, name)).params)
      if (p.def) params.set(p.name, *p.def);
    auto be = reg.create_backend(name, params);
    if (!be) {
      b.unavailable = be.status().message();
    } else {
      for (size_t i = 0; i < (*be)->device_count(); ++i) b.devices.push_back((*be)->device(i).info());
    }
    out.push_back(std::move(b));
  }
  return out;
}

json devices_json(const std::vector<BackendDevices>& all) {
  json out = json::array();
  for (const auto& b : all) {
    json bj{{"backend", b.backend}, {"available", b.unavailable.empty()}, {"devices", json::array()}};
    if (!b.unavailable.empty()) bj["unavailable_reason"] = b.unavailable;
    for (const auto& d : b.devices)
      bj["devices"].push_back({{"name", d.name},
                               {"description", d.description},
                               {"kind", std::string(device_kind_name(d.kind))},
                               {"total_memory", d.total_memory},
                               {"free_memory", d.free_memory},
                               {"unified_memory", d.unified_memory},
                               {"reads_host_memory", d.reads_host_memory},
                               {"features", d.features}});
    out.push_back(std::move(bj));
  }
  return out;
}

void print_devices(const std::vector<BackendDevices>& all) {
  std::cout << "\nDevices:\n";
  if (all.empty()) std::cout << "  (no backend plugins)\n";
  for (const auto& b : all) {
    if (!b.unavailable.empty()) {
      std::cout << "  " << b.backend << ": unavailable: " << b.unavailable << "\n";
      continue;
    }
    std::cout << "  " << b.backend << ":" << (b.devices.empty() ? " (no devices)" : "") << "\n";
    for (const auto& d : b.devices) {
      std::cout << "    " << d.name << ": " << d.description << " (" << device_kind_name(d.kind) << "), "
                << util::human_bytes(d.free_memory) << " free of " << util::human_bytes(d.total_memory);
      if (d.reads_host_memory) std::cout << "; reads host memory";
      if (d.unified_memory) std::cout << "; unified memory";
      std::cout << "\n";
      for (const auto& f : d.features) std::cout << "      " << f << "\n";
    }
  }
}

// A plugin's type as its manifest states it; registered as "<plugin>.<name>".
std::string type_line(const std::string& plugin, const registry::StorageTypeManifest& t) {
  std::string line = plugin + "." + t.name + ": " + std::to_string(t.block_size) + " elements in " +
                     std::to_string(t.block_bytes) + " bytes";
  if (t.group_size) line += ", groups of " + std::to_string(t.group_size);
  if (!t.repack_to.empty()) line += ", repacks into " + t.repack_to;
  return line;
}

json type_json(const std::string& plugin, const registry::StorageTypeManifest& t) {
  return {{"name", plugin + "." + t.name}, {"block_size", t.block_size}, {"block_bytes", t.block_bytes},
          {"group_size", t.group_size}, {"quantized", t.quantized}, {"quantize", t.quantize},
          {"repack_to", t.repack_to}};
}

// The runtime's own types, registered under "gguf" and "core" before any plugin loads.
json builtin_types_json() {
  json all = json::array();
  const auto& reg = types::TypeRegistry::process();
  for (size_t i = 0; i < reg.size(); ++i) {
    const auto* e = reg.at(i);
    if (!e->builtin) continue;
    all.push_back({{"name", e->name}, {"id", static_cast<uint32_t>(e->info.type)}, {"provider", e->provider},
                   {"block_size", e->info.block_size}, {"block_bytes", e->info.block_bytes},
                   {"dequantize", e->desc.dequantize_row != nullptr}, {"quantize", e->desc.quantize_row != nullptr}});
  }
  return all;
}

void print_builtin_types() {
  std::cout << "\nBuilt-in storage types:\n";
  const auto& reg = types::TypeRegistry::process();
  for (const char* provider : {"gguf", "core"}) {
    std::string line = std::string("  ") + provider + ":";
    for (size_t i = 0; i < reg.size(); ++i)
      if (const auto* e = reg.at(i); e->builtin && e->provider == provider) line += " " + e->name;
    std::cout << line << "\n";
  }
}

int run_plugins(bool as_json, bool check, bool devices) {
  std::vector<std::string> warnings;
  auto dirs = registry::default_search_path({}, warnings);
  for (const auto& w : warnings) std::cerr << "switchyard: warning: " << w << "\n";
  registry::Registry reg(dirs);

  std::vector<std::string> load_errors(reg.plugins().size());
  int rc = 0;
  if (check)
    for (size_t i = 0; i < reg.plugins().size(); ++i)
      if (auto st = reg.load(i); !st) {
        load_errors[i] = st.message();
        rc = 1;
      }

  if (as_json) {
    json out{{"search_path", json::array()}, {"plugins", json::array()}, {"refused", json::array()}};
    for (const auto& d : reg.search_path()) {
      std::error_code ec;
      out["search_path"].push_back(
          {{"path", d.path.string()}, {"origin", d.origin}, {"exists", std::filesystem::is_directory(d.path, ec)}});
    }
    for (size_t i = 0; i < reg.plugins().size(); ++i) {
      const auto& p = reg.plugins()[i];
      json comps = json::array();
      for (const auto& c : reg.components()) {
        if (c.plugin != i) continue;
        const auto& m = reg.manifest(c);
        json cj = registry::component_to_json(m);
        cj["available"] = c.available;
        if (!c.available) cj["unavailable_reason"] = c.unavailable_reason;
        comps.push_back(cj);
      }
      json types = json::array();
      for (const auto& t : p.manifest.storage_types) types.push_back(type_json(p.manifest.name, t));
      json pj{{"name", p.manifest.name}, {"version", p.manifest.version}, {"summary", p.manifest.summary},
              {"library", p.library.string()}, {"origin", p.origin},
              {"manifest", p.has_manifest_file ? registry::manifest_path_for(p.library).string() : ""},
              {"abi", std::to_string(p.manifest.abi_major) + "." + std::to_string(p.manifest.abi_minor)},
              {"components", comps}, {"storage_types", types}};
      if (check) pj["load"] = load_errors[i].empty() ? "ok" : load_errors[i];
      out["plugins"].push_back(pj);
    }
    for (const auto& r : reg.refusals()) out["refused"].push_back({{"file", r.file.string()}, {"reason", r.reason}});
    out["builtin_storage_types"] = builtin_types_json();
    if (devices) out["devices"] = devices_json(probe_devices(reg));
    std::cout << json_text(out, 2) << "\n";
    return rc;
  }

  std::cout << "Plugin search path:\n";
  for (const auto& d : reg.search_path()) {
    std::error_code ec;
    std::cout << "  " << d.path.string() << "  (" << d.origin
              << (std::filesystem::is_directory(d.path, ec) ? "" : ", not present") << ")\n";
  }
  std::cout << "\nPlugins:\n";
  if (reg.plugins().empty()) std::cout << "  (none found)\n";
  for (size_t i = 0; i < reg.plugins().size(); ++i) {
    const auto& p = reg.plugins()[i];
    std::cout << "  " << p.manifest.name << " " << p.manifest.version << "  " << p.library.string() << "\n";
    if (check) std::cout << "    load: " << (load_errors[i].empty() ? "ok" : load_errors[i]) << "\n";
    for (const auto& c : reg.components()) {
      if (c.plugin != i) continue;
      const auto& m = reg.manifest(c);
      std::cout << "    " << component_kind_name(m.kind) << " " << m.name << " " << m.version << " (rank " << m.rank
                << ")" << (m.summary.empty() ? "" : ": " + m.summary) << (m.has_trait(kTraitTerminal) ? "  [terminal]" : "")
                << (c.available ? "" : "  [unavailable: " + c.unavailable_reason + "]") << "\n";
    }
    for (const auto& t : p.manifest.storage_types) std::cout << "    storage type " << type_line(p.manifest.name, t) << "\n";
  }
  print_builtin_types();
  if (!reg.refusals().empty()) {
    std::cout << "\nRefused:\n";
    for (const auto& r : reg.refusals()) std::cout << "  " << r.file.string() << ": " << r.reason << "\n";
  }
  if (devices) print_devices(probe_devices(reg));
  return rc;
}

}  // namespace

void add_plugins_command(CLI::App& app, Dispatch& d) {
  struct Flags {
    bool json = false;
    bool check = false;
    bool devices = false;
  };
  auto flags = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("plugins", "List installed plugins and their components (reads manifests only)");
  cmd->add_flag("--json", flags->json, "Print JSON instead of text");
  cmd->add_flag("--check", flags->check, "Also load every plugin library and verify it against its manifest");
  cmd->add_flag("--devices", flags->devices,
                "Also start every backend and list its devices: memory, features and the kernel paths each uses");
  cmd->callback([&d, flags] { d.run = [flags] { return run_plugins(flags->json, flags->check, flags->devices); }; });
}

}  // namespace sy::cli
