#include "pipeline/load.hpp"

#include "registry/registry.hpp"

namespace sy::pipeline {
namespace fs = std::filesystem;

std::unique_ptr<registry::Registry> registry_for(const Node& root, const std::string& file,
                                                 const std::vector<fs::path>* fixed_search_dirs,
                                                 std::vector<Diagnostic>& diags) {
  std::vector<Diagnostic> scratch;  // plugin_path errors are reported by validate()
  const auto extra = plugin_dirs(root, scratch);
  std::vector<registry::SearchDir> dirs;
  if (fixed_search_dirs) {
    for (const auto& d : *fixed_search_dirs) dirs.push_back({d, "given"});
    for (const auto& d : extra) dirs.push_back({d, "pipeline plugin_path"});
  } else {
    std::vector<std::string> warnings;
    dirs = registry::default_search_path(extra, warnings);
    for (const auto& w : warnings) diags.push_back({Location{file, 0, 0}, w, true});
  }
  return std::make_unique<registry::Registry>(std::move(dirs));
}

std::optional<std::string> primary_param(const registry::Registry& reg, std::string_view sampler) {
  if (const auto* rec = reg.find(ComponentKind::sampler, sampler))
    for (const auto& p : reg.manifest(*rec).params)
      if (p.primary) return p.name;
  return std::nullopt;
}

namespace {

LoadResult finish(LoadResult out, Node root, const std::string& file, const LoadOptions& opts) {
  // Manifests are read before the overrides because expanding `{ top_p: 0.9 }` needs the
  // sampler's main parameter. The same registry validates unless the overrides changed
  // `plugin_path`.
  std::vector<Diagnostic> scratch, search_warnings;
  const auto dirs_before = plugin_dirs(root, scratch);
  auto reg = registry_for(root, file, opts.fixed_search_dirs, search_warnings);
  const PrimaryParam primary = [&](std::string_view sampler) { return primary_param(*reg, sampler); };
  for (const auto& o : opts.sets) apply_set(root, o, out.diagnostics, primary);
  if (has_errors(out.diagnostics)) return out;
  if (opts.edit) {
    opts.edit(root, *reg, out.diagnostics);
    if (has_errors(out.diagnostics)) return out;
  }
  if (plugin_dirs(root, scratch) != dirs_before) {
    search_warnings.clear();
    reg = registry_for(root, file, opts.fixed_search_dirs, search_warnings);
  }
  out.diagnostics.insert(out.diagnostics.end(), search_warnings.begin(), search_warnings.end());
  out.pipeline = validate(root, *reg, out.diagnostics, opts.validate);
  out.pipeline.source = file;
  return out;
}

}  // namespace

LoadResult load_pipeline_file(const fs::path& file, const LoadOptions& opts) {
  LoadResult out;
  Node root = load_with_extends(file, out.diagnostics);
  if (has_errors(out.diagnostics)) return out;
  return finish(std::move(out), std::move(root), file.string(), opts);
}

LoadResult load_pipeline_from_text(const std::string& text, const std::string& name, const LoadOptions& opts) {
  LoadResult out;
  Node root = parse_yaml(text, name, out.diagnostics);
  if (has_errors(out.diagnostics)) return out;
  return finish(std::move(out), std::move(root), name, opts);
}

}  // namespace sy::pipeline
