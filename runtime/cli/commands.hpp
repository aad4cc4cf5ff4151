// Each subcommand registers itself on the app and runs through a callback that stores
// its exit code, so main() stays a dispatcher.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace sy::cli {

/// The chosen command: its callback stores the action here during parsing, and main()
/// runs it once global options (logging) are applied. Returns the exit status.
struct Dispatch {
  std::function<int()> run;
};

void add_plugins_command(CLI::App& app, Dispatch& d);
void add_validate_command(CLI::App& app, Dispatch& d);
void add_inspect_command(CLI::App& app, Dispatch& d);
void add_run_command(CLI::App& app, Dispatch& d);
void add_synth_command(CLI::App& app, Dispatch& d);
void add_tokenize_commands(CLI::App& app, Dispatch& d);
void add_template_command(CLI::App& app, Dispatch& d);
void add_chat_command(CLI::App& app, Dispatch& d);
void add_plan_command(CLI::App& app, Dispatch& d);
void add_conformance_command(CLI::App& app, Dispatch& d);
void add_bench_command(CLI::App& app, Dispatch& d);
void add_serve_command(CLI::App& app, Dispatch& d);
void add_perplexity_command(CLI::App& app, Dispatch& d);
void add_quantize_command(CLI::App& app, Dispatch& d);
void add_verify_command(CLI::App& app, Dispatch& d);
void add_convert_command(CLI::App& app, Dispatch& d);
void add_gguf_command(CLI::App& app, Dispatch& d);
void add_eval_command(CLI::App& app, Dispatch& d);
void add_imatrix_command(CLI::App& app, Dispatch& d);

}  // namespace sy::cli
