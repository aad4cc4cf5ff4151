// libFuzzer target for YAML pipelines, `extends` and `--set`: any input must end with a
// pipeline or located diagnostics, never a crash, a hang, unbounded memory or undefined
// behaviour. The input is up to three parts separated by lines "%%":
//   child document  [%% base document  [%% one --set override per line]]
// The child is /fuzz/child.yaml and the base /fuzz/base.yaml, read through an in-memory
// reader, so `extends: base.yaml` (or a cycle back to child.yaml) resolves without files.
// The registry reads a small hand-written manifest (a cpu backend and a few samplers of
// every parameter type) so plugin parameters are checked as in a real installation.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/validate.hpp"
#include "registry/registry.hpp"
#include "switchyard/plugin.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json param(const char* name, const char* type, json min, json max, json def, bool primary, json choices = nullptr) {
  json p{{"name", name}, {"type", type}, {"doc", ""}, {"primary", primary}};
  if (!min.is_null()) p["min"] = min;
  if (!max.is_null()) p["max"] = max;
  if (!def.is_null()) p["default"] = def;
  if (!choices.is_null()) p["choices"] = choices;
  return p;
}

json component(const char* kind, const char* name, json params) {
  return {{"kind", kind}, {"name", name}, {"version", "1.0.0"}, {"summary", ""}, {"rank", 0},
          {"cpu_features", json::array()}, {"params", params}};
}

// A plugin directory holding an empty library file and its manifest: the registry reads
// manifests without loading libraries, and validation never loads one.
const sy::registry::Registry& registry() {
  static const auto reg = [] {
    const fs::path dir = fs::temp_directory_path() / ("sy-pipeline-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "libfuzzplugin.so").put('\0');
    const json manifest{
        {"switchyard_manifest", 1},
        {"abi", {{"major", sy::kAbiMajor}, {"minor", sy::kAbiMinor}, {"tag", sy::kAbiTag}}},
        {"library", "libfuzzplugin.so"},
        {"plugin", {{"name", "fuzz"}, {"summary", ""}, {"version", "0.1.0"}}},
        {"components",
         json::array({
             component("backend", "cpu", json::array({param("threads", "integer", 1, 1024, "auto", true, {"auto"})})),
             component("format", "gguf", json::array()),
             component("sampler", "greedy", json::array()),
             component("sampler", "dist", json::array({param("seed", "integer", 0, 9.2e18, "random", true, {"random"})})),
             component("sampler", "temperature", json::array({param("t", "number", 0, 100, 0.8, true)})),
             component("sampler", "top_k", json::array({param("k", "integer", 0, 1e9, 40, true)})),
             component("sampler", "top_p", json::array({param("p", "number", 0, 1, 0.95, true),
                                                        param("min_keep", "integer", 1, 1e6, 1, false)})),
             component("sampler", "min_p", json::array({param("p", "number", 0, 1, 0.05, true)})),
             component("sampler", "logit_bias",
                       json::array({param("bias", "string list", nullptr, nullptr, json::array(), true)})),
             component("sampler", "dry",
                       json::array({param("multiplier", "number", 0, 100, 0.8, true),
                                    param("sequence_breakers", "string list", nullptr, nullptr, json::array({"\n"}),
                                          false)})),
         })}};
    std::ofstream(dir / "libfuzzplugin.so.json") << manifest.dump();
    auto r = std::make_unique<sy::registry::Registry>(std::vector<sy::registry::SearchDir>{{dir, "fuzz"}});
    fs::remove_all(dir);
    return r;
  }();
  return *reg;
}

std::vector<std::string_view> split(std::string_view s, std::string_view sep, size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const size_t at = s.find(sep);
    if (at == std::string_view::npos) break;
    parts.push_back(s.substr(0, at));
    s.remove_prefix(at + sep.size());
  }
  parts.push_back(s);
  return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = split(input, "\n%%\n", 3);
  const std::string child(parts[0]);
  const std::string base(parts.size() > 1 ? parts[1] : std::string_view("model: m.gguf\n"));
  std::vector<std::string> sets;
  if (parts.size() > 2)
    for (auto line : split(parts[2], "\n", 64))
      if (!line.empty()) sets.emplace_back(line);

  const sy::pipeline::TextReader read = [&](const fs::path& p) -> sy::Result<std::string> {
    if (p == "/fuzz/child.yaml") return child;
    if (p == "/fuzz/base.yaml") return base;
    return sy::error::not_found("pipeline file '" + p.string() + "' does not exist");
  };
  std::vector<sy::pipeline::Diagnostic> diags;
  sy::pipeline::Node root = sy::pipeline::load_with_extends("/fuzz/child.yaml", diags, read);
  // Shorthand samplers expand through their main parameter, as the loader does with the
  // manifests; one name has none, so both answers are reached.
  const sy::pipeline::PrimaryParam primary = [](std::string_view sampler) -> std::optional<std::string> {
    if (sampler == "greedy") return std::nullopt;
    return std::string("p");
  };
  for (const auto& s : sets) sy::pipeline::apply_set(root, s, diags, primary);
  (void)sy::pipeline::plugin_dirs(root, diags);
  (void)sy::pipeline::validate(root, registry(), diags);
  for (const auto& d : diags) (void)sy::pipeline::format_diagnostic(d);
  return 0;
}
