// switchyard conformance BACKEND [--device N] [--ops a,b] [--types t,...] [--fixtures DIR]
// [--require-all] [--json] [--plugin-path DIR]: the backend conformance suite, part of the
// plugin contract. Exit status: 0 passed, 1 a case or fixture failed (or, with
// --require-all, a case was unsupported), 2 a usage mistake, 3 the backend has no usable
// device here (test harnesses report that as a skip).
#include <iostream>

#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "conformance/suite.hpp"

namespace sy::cli {
namespace {

struct ConformanceArgs {
  conformance::Options o;
  std::vector<std::string> plugin_path;
  bool json = false;
};

int run_conformance(const ConformanceArgs& a) {
  conformance::Options o = a.o;
  for (const auto& p : a.plugin_path) o.plugin_path.push_back(std::filesystem::absolute(p));
  if (!o.fixtures.empty()) o.fixtures = std::filesystem::absolute(o.fixtures);
  conformance::Report report;
  // With --json the per-fixture progress lines go to stderr, so stdout is one document.
  auto st = conformance::run_suite(o, report, a.json ? std::cerr : std::cout);
  if (!st) {
    std::cerr << "switchyard conformance: " << st.message() << "\n";
    return st.code() == StatusCode::unavailable ? 3 : 2;
  }
  if (a.json) std::cout << json_text(conformance::to_json(report), 2) << "\n";
  else conformance::print_text(report, std::cout);
  return report.exit_code();
}

}  // namespace

void add_conformance_command(CLI::App& app, Dispatch& d) {
  auto args = std::make_shared<ConformanceArgs>();
  auto* cmd = app.add_subcommand(
      "conformance",
      "Check a backend against the CPU's scalar reference: every op x storage type x odd and non-contiguous "
      "shapes, and with --fixtures every shared fixture model. Exit status 0 passed, 1 failed, 2 usage, "
      "3 the backend has no usable device here");
  cmd->add_option("backend", args->o.backend, "Backend plugin to test (cpu, vulkan, cuda, or one of your own)")
      ->required();
  cmd->add_option("--device", args->o.device, "Which of the backend's devices (0 is the first)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--ops", args->o.ops, "Only these ops, comma-separated (matmul,rope,...)")->delimiter(',');
  cmd->add_option("--types", args->o.types, "Only cases of these storage types, comma-separated (F32,Q4_K,...)")
      ->delimiter(',');
  cmd->add_option("--fixtures", args->o.fixtures,
                  "The shared fixtures folder (shared/fixtures): also run every fixture model on the backend, "
                  "teacher-forced within its file's tolerance, and greedily against the CPU");
  cmd->add_option("--fixture", args->o.fixture_names,
                  "Only fixtures whose file name contains one of these, comma-separated")
      ->delimiter(',');
  cmd->add_flag("--fixtures-only", args->o.fixtures_only, "Skip the op cases (with --fixtures)");
  cmd->add_flag("--strict", args->o.strict,
                "Fixtures with strict: true, so a node the backend does not run fails instead of falling back");
  cmd->add_option("--cpu-moe", args->o.cpu_moe,
                  "Fixtures with placement.cpu_moe N or all: routed experts in RAM, the rest on the backend (hybrid)");
  cmd->add_flag("--require-all", args->o.require_all, "Fail when the backend refuses a case, not only when it errs");
  cmd->add_option("--may-refuse", args->o.may_refuse,
                  "With --require-all: ops the backend may still refuse (left to the CPU by design), e.g. gather_cols")
      ->delimiter(',');
  cmd->add_flag("--json", args->json, "Print the whole report as JSON (every case with its error and tolerance)");
  cmd->add_option("--plugin-path", args->plugin_path,
                  "Also search this folder for plugins (repeatable), after the default search path")
      ->allow_extra_args(false);
  cmd->callback([&d, args] { d.run = [args] { return run_conformance(*args); }; });
}

}  // namespace sy::cli
