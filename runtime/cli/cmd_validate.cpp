// switchyard validate FILE... [--set key=value]...: checks pipelines against the schema
// and the installed plugins' parameter schemas, without loading any plugin.
#include <iostream>

#include "cli/commands.hpp"
#include "pipeline/validate.hpp"

namespace sy::cli {
namespace {

struct ValidateArgs {
  std::vector<std::string> files;
  std::vector<std::string> sets;
};

int run_validate(const ValidateArgs& a) {
  int rc = 0;
  for (const auto& f : a.files) {
    auto r = pipeline::load_pipeline(f, a.sets);
    for (const auto& d : r.diagnostics) std::cerr << pipeline::format_diagnostic(d) << "\n";
    if (r.ok()) {
      std::cout << f << ": ok\n";
    } else {
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

void add_validate_command(CLI::App& app, Dispatch& d) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand("validate", "Check pipeline files; exits 0 when all are valid, 1 otherwise");
  cmd->add_option("files", args->files, "Pipeline YAML files")->required();
  cmd->add_option("--set", args->sets, "Override a key, e.g. --set context.length=8192 (repeatable)");
  cmd->callback([&d, args] { d.run = [args] { return run_validate(*args); }; });
}

}  // namespace sy::cli
