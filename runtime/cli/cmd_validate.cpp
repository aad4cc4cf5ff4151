// switchyard validate FILE... [--set key=value]... [-m MODEL]: checks pipelines against the
// schema and the installed plugins' parameter schemas, without loading any plugin. With a
// model it also runs the checks that need the model's header (engine/preflight), the same
// ones `run` makes before loading the weights.
#include <algorithm>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/llama_flags.hpp"
#include "convert/native.hpp"
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

// The conversion plan as each of the pipeline's backends states its types (nothing is
// started, so placement is not known: every tensor is judged on every backend). What the
// CPU cannot compute stops `run`, so it is an error here too.
std::vector<std::string> conversion_lines(const pipeline::Pipeline& p, const planner::ModelDesc& m,
                                          const registry::Registry& reg, std::vector<pipeline::Diagnostic>& diags) {
  convert::Plan plan;
  const auto convert_to = convert::convert_to_type(p.format.convert_to);
  std::vector<std::string> done;
  for (const auto& b : p.backends) {
    if (std::find(done.begin(), done.end(), b.plugin) != done.end()) continue;
    done.push_back(b.plugin);
    const auto* rec = reg.find(ComponentKind::backend, b.plugin);
    if (!rec) continue;  // validation has said so
    const auto types = convert::declared_types(reg.manifest(*rec), b.plugin, nullptr);
    for (const auto& t : m.tensors) {
      const auto d = convert::decide(t, types, convert_to);
      if (d.action == convert::Action::impossible && b.plugin == "cpu") {
        diags.push_back({p.where("backends"), "tensor " + t.name + " is stored as " +
                                                  std::string(storage_type_name(t.type)) + ", which the cpu cannot compute: " + d.fix,
                         false});
        break;
      }
      plan.add(b.plugin, t, d);
    }
  }
  std::vector<std::string> lines;
  for (const auto& s : plan.steps()) {
    lines.push_back(convert::describe(s));
    if (s.action == convert::Action::impossible)
      lines.back() += p.strict ? " (`strict: true` refuses it where placed there)"
                               : " (where placed there, such tensors stay in RAM and the CPU runs them)";
  }
  return lines;
}

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
    std::vector<std::string> plan_lines;
    if (r.ok() && model) {
      std::vector<std::string> warnings;
      registry::Registry file_reg(registry::default_search_path(r.pipeline.plugin_path, warnings));
      // A pipeline that names its format reads the model as run will (a format of its
      // plugin_path may present other tensor types than the probed one).
      std::optional<planner::ModelDesc> own;
      if (!r.pipeline.model.format.empty()) {
        auto d = planner::describe_file(file_reg, a.model, r.pipeline.model.format);
        if (!d) {
          std::cerr << "switchyard validate: " << f << ": -m " << a.model << ": " << d.status().message() << "\n";
          rc = 1;
          continue;
        }
        own = std::move(*d);
      }
      const planner::ModelDesc& desc = own ? *own : *model;
      for (auto& d : engine::preflight(r.pipeline, desc, file_reg)) r.diagnostics.push_back(std::move(d));
      if (r.ok()) plan_lines = conversion_lines(r.pipeline, desc, file_reg, r.diagnostics);
    }
    for (const auto& d : r.diagnostics) std::cerr << pipeline::format_diagnostic(d) << "\n";
    if (r.ok()) {
      std::cout << f << ": ok" << (model ? " with " + a.model : "") << "\n";
      if (!plan_lines.empty()) std::cout << "conversion plan (per backend, as if every tensor were placed on it):\n";
      for (const auto& l : plan_lines) std::cout << "  " << l << "\n";
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
