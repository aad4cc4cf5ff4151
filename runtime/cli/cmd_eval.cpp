// switchyard eval: the quality regression runner (runtime/eval). Exit status: 0 when every
// threshold held, 3 when one was crossed (a regression, for CI gates), 1 for bad input.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "eval/report.hpp"
#include "util/atomic_file.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace eval_cmd {

struct EvalArgs {
  std::string file, report, plot;
  bool json = false, quiet = false;
  int64_t max_prompts = 0, max_tokens = 0, runs = -1;
};

int fail(const std::string& msg) {
  std::cerr << "switchyard eval: " << msg << "\n";
  return 1;
}

Status write_text(const std::filesystem::path& path, const std::string& text, std::string_view what) {
  auto f = util::AtomicFile::create(path, what);
  if (!f) return f.status();
  if (auto st = f->write(std::as_bytes(std::span(text.data(), text.size()))); !st) return st;
  return f->commit();
}

int run_eval_cmd(const EvalArgs& a) {
  auto spec = eval::load_spec(a.file);
  if (!spec) return fail(spec.status().message());
  auto prompts = eval::load_prompts(spec->prompts);
  if (!prompts) return fail(prompts.status().message());
  // A quick look at a long eval: its first prompts, fewer tokens or runs.
  if (a.max_prompts > 0 && static_cast<int64_t>(prompts->size()) > a.max_prompts)
    prompts->resize(static_cast<size_t>(a.max_prompts));
  if (a.max_tokens > 0) spec->max_tokens = a.max_tokens;
  if (a.runs >= 0) spec->runs = a.runs;
  const std::string stem = std::filesystem::path(a.file).stem().string();
  const std::filesystem::path report = a.report.empty() ? stem + "-report.md" : a.report;
  const std::filesystem::path plot = a.plot.empty() ? report.parent_path() / (report.stem().string() + ".svg")
                                                    : std::filesystem::path(a.plot);
  // Output paths are checked before any model loads, so a typo costs no waiting.
  if (auto st = util::check_output_path(report, "--report"); !st) return fail(st.message());
  if (auto st = util::check_output_path(plot, "--plot"); !st) return fail(st.message());

  std::cerr << "eval: " << prompts->size() << " prompts, " << spec->pipelines.size() << " pipelines, reference "
            << spec->reference << "\n";
  auto results = eval::run_eval(*spec, *prompts, [&](const std::string& line) {
    if (!a.quiet) std::cerr << "eval: " << line << "\n";
  });
  if (!results) return fail(results.status().message());
  const auto failures = eval::check_thresholds(*spec, *results);
  // The report links the plot by a path relative to the report's folder when it can.
  std::error_code ec;
  auto link = std::filesystem::relative(plot, report.parent_path().empty() ? "." : report.parent_path(), ec);
  const std::string md = eval::markdown_report(*spec, *prompts, *results, failures, ec ? plot.string() : link.string());
  if (auto st = write_text(plot, eval::kld_plot(*results), "--plot"); !st) return fail(st.message());
  if (auto st = write_text(report, md, "--report"); !st) return fail(st.message());
  if (a.json) std::cout << json_text(eval::report_json(*spec, *results, failures)) << "\n";
  else std::cout << md;
  std::cerr << "eval: wrote " << report.string() << " and " << plot.string() << "\n";
  if (!failures.empty()) {
    for (const auto& f : failures) std::cerr << "eval: FAIL " << f << "\n";
    return 3;
  }
  std::cerr << "eval: pass\n";
  return 0;
}

}  // namespace eval_cmd

void add_eval_command(CLI::App& app, Dispatch& d) {
  using namespace eval_cmd;
  auto a = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Quality regression runner: pipelines against a reference on a prompt set; "
                                         "exit 3 when a threshold is crossed");
  cmd->add_option("file", a->file, "The eval file (YAML; configs/eval/ has examples)")->required();
  cmd->add_option("--report", a->report, "The markdown report to write (default: FILE's name + -report.md, here)");
  cmd->add_option("--plot", a->plot, "The SVG plot of the KL divergence distributions (default: beside the report)");
  cmd->add_option("--max-prompts", a->max_prompts, "Only the first N prompts of the set")->check(CLI::Range(int64_t{1}, INT64_MAX));
  cmd->add_option("--max-tokens", a->max_tokens, "Generate N tokens per prompt instead of the file's max_tokens")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--runs", a->runs, "Sampled runs per prompt instead of the file's runs")->check(CLI::Range(int64_t{0}, int64_t{1000}));
  cmd->add_flag("--json", a->json, "Print the figures as one JSON object instead of the markdown");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress lines");
  cmd->callback([&d, a] { d.run = [a] { return run_eval_cmd(*a); }; });
}

}  // namespace sy::cli
