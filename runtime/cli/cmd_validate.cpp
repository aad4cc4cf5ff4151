// switchyard validate FILE... [--set key=value]... [-m MODEL]: checks pipelines against the
// schema and the installed plugins' parameter schemas, without loading any plugin. With a
// model it also runs the checks that need the model's header (engine/preflight), the same
// ones `run` makes before loading the weights.
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/llama_flags.hpp"
#include "engine/preflight.hpp"
#include "pipeline/load.hpp"
#include "planner/describe.hpp"
#include "registry/search_path.hpp"

namespace sy::cli {
namespace {

struct ValidateArgs {
  std::vector<std::string> files;
  std::vector<std::string> sets;
  std::string model;
};

int run_validate(const ValidateArgs& a) {
  int rc = 0;
  // The header is read once for all files; each file's own plugin_path only adds samplers
  // and backends, which the model checks do not need.
  std::optional<planner::ModelDesc> model;
  std::unique_ptr<registry::Registry> reg;
  if (!a.model.empty()) {
    std::vector<std::string> warnings;
    reg = std::make_unique<registry::Registry>(registry::default_search_path({}, warnings));
    auto d = planner::describe_file(*reg, a.model);
    if (!d) {
      std::cerr << "switchyard validate: -m " << a.model << ": " << d.status().message() << "\n";
      return 1;
    }
    model = std::move(*d);
  }
  for (const auto& f : a.files) {
    // -m replaces model.path before validation, as on run, so the file's own model need
    // not exist.
    PipelineFlags flags;
    flags.model = a.model;
    pipeline::LoadOptions opts;
    opts.sets = a.sets;
    opts.edit = flags_edit(flags);
    auto r = pipeline::load_pipeline_file(f, opts);
    if (r.ok() && model) {
      std::vector<std::string> warnings;
      const registry::Registry file_reg(registry::default_search_path(r.pipeline.plugin_path, warnings));
      for (auto& d : engine::preflight(r.pipeline, *model, file_reg)) r.diagnostics.push_back(std::move(d));
    }
    for (const auto& d : r.diagnostics) std::cerr << pipeline::format_diagnostic(d) << "\n";
    if (r.ok()) {
      std::cout << f << ": ok" << (model ? " with " + a.model : "") << "\n";
    } else {
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

void add_validate_command(CLI::App& app, Dispatch& d) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Check pipeline files; exits 0 when all are valid, 1 otherwise. Without -m only what needs no model is checked");
  cmd->add_option("files", args->files, "Pipeline YAML files")->required();
  cmd->add_option("--set", args->sets, "Override a key, e.g. --set context.length=8192 (repeatable)");
  cmd->add_option("-m,--model", args->model,
                  "Model file (replaces model.path): its header adds the checks run makes before loading weights "
                  "(token ids in the vocabulary, the tokenizer fits, the context fits in memory)");
  cmd->callback([&d, args] { d.run = [args] { return run_validate(*args); }; });
}

}  // namespace sy::cli
