// switchyard plugins [--json] [--check]: what is installed, from manifests alone;
// --check also loads every library and verifies it against its manifest.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "registry/registry.hpp"

namespace sy::cli {
namespace {

using nlohmann::json;

int run_plugins(bool as_json, bool check) {
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
      json pj{{"name", p.manifest.name}, {"version", p.manifest.version}, {"summary", p.manifest.summary},
              {"library", p.library.string()}, {"origin", p.origin},
              {"manifest", p.has_manifest_file ? registry::manifest_path_for(p.library).string() : ""},
              {"abi", std::to_string(p.manifest.abi_major) + "." + std::to_string(p.manifest.abi_minor)},
              {"components", comps}};
      if (check) pj["load"] = load_errors[i].empty() ? "ok" : load_errors[i];
      out["plugins"].push_back(pj);
    }
    for (const auto& r : reg.refusals()) out["refused"].push_back({{"file", r.file.string()}, {"reason", r.reason}});
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
  }
  if (!reg.refusals().empty()) {
    std::cout << "\nRefused:\n";
    for (const auto& r : reg.refusals()) std::cout << "  " << r.file.string() << ": " << r.reason << "\n";
  }
  return rc;
}

}  // namespace

void add_plugins_command(CLI::App& app, Dispatch& d) {
  struct Flags {
    bool json = false;
    bool check = false;
  };
  auto flags = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("plugins", "List installed plugins and their components (reads manifests only)");
  cmd->add_flag("--json", flags->json, "Print JSON instead of text");
  cmd->add_flag("--check", flags->check, "Also load every plugin library and verify it against its manifest");
  cmd->callback([&d, flags] { d.run = [flags] { return run_plugins(flags->json, flags->check); }; });
}

}  // namespace sy::cli
