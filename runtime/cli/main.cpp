// The switchyard executable: global options, then one subcommand.
#include <algorithm>
#include <iostream>
#include <new>
#include <optional>

#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "cli/help.hpp"
#include "cli/llama_aliases.hpp"
#include "cli/option_names.hpp"
#include "cli/parse_errors.hpp"
#include "log/log.hpp"
#include "util/suggest.hpp"

namespace {

// The first token that is not a global option (or its value): the intended subcommand.
std::optional<std::string> first_command_token(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--log-level" || a == "--log-file") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    return a;
  }
  return std::nullopt;
}

int run_command(int argc_in, char** argv_in) {
  CLI::App app{"Switchyard: run large language models, above all big MoE models, on hardware that looks too small",
               "switchyard"};
  app.set_version_flag("--version", "switchyard " SY_VERSION);
  app.require_subcommand(1);
  std::string level = "warn";
  std::string log_file;
  app.add_option("--log-level", level, "trace, debug, info, warn, error or off")->capture_default_str();
  app.add_option("--log-file", log_file, "Also append log lines to this file");
  bool parse_only = false;
  app.add_flag("--parse-only", parse_only, "Check the command line (flags, values) and exit 0 without running the command");

  sy::cli::Dispatch dispatch;
  sy::cli::add_plugins_command(app, dispatch);
  sy::cli::add_validate_command(app, dispatch);
  sy::cli::add_inspect_command(app, dispatch);
  sy::cli::add_run_command(app, dispatch);
  sy::cli::add_synth_command(app, dispatch);
  sy::cli::add_plan_command(app, dispatch);
  sy::cli::add_tokenize_commands(app, dispatch);
  sy::cli::add_template_command(app, dispatch);
  sy::cli::add_chat_command(app, dispatch);
  sy::cli::add_serve_command(app, dispatch);
  sy::cli::add_conformance_command(app, dispatch);
  sy::cli::add_bench_command(app, dispatch);
  sy::cli::add_perplexity_command(app, dispatch);
  sy::cli::add_quantize_command(app, dispatch);
  sy::cli::add_verify_command(app, dispatch);
  sy::cli::add_convert_command(app, dispatch);
  sy::cli::add_gguf_command(app, dispatch);
  sy::cli::add_eval_command(app, dispatch);
  sy::cli::add_imatrix_command(app, dispatch);
  sy::cli::add_completion_command(app, dispatch);
  sy::cli::add_help_command(app, dispatch);  // last: it lists the commands above

  // llama.cpp's -ngl and the like become long options, but not where they are the value of
  // an option before them (`-p -sys` is the prompt "-sys").
  const auto tok_in = first_command_token(argc_in, argv_in);
  const CLI::App* sub_in = nullptr;
  if (tok_in)
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
      if (sub->get_name() == *tok_in) sub_in = sub;
  const std::vector<std::string> args =
      sy::cli::expand_llama_aliases(argc_in, argv_in, [&](const std::string& word) {
        const CLI::Option* o = sub_in ? sy::cli::find_option(*sub_in, word) : nullptr;
        return o && sy::cli::takes_value(*o) && word.find('=') == std::string::npos;
      });
  std::vector<const char*> argv_vec;
  for (const auto& a : args) argv_vec.push_back(a.c_str());
  const int argc = static_cast<int>(argv_vec.size());
  const char* const* argv = argv_vec.data();

  if (auto tok = first_command_token(argc, argv)) {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), *tok) == names.end()) {
      std::cerr << "switchyard: unknown command '" << *tok << "'";
      if (auto s = sy::closest(*tok, names)) std::cerr << "; did you mean '" << *s << "'?";
      std::cerr << "\nRun 'switchyard --help' for the list of commands.\n";
      return 2;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return sy::cli::report_parse_error(app, e, std::vector<std::string>(argv_in, argv_in + argc_in), args);
  }
  if (auto st = sy::log::set_level(level); !st) {
    std::cerr << "switchyard: --log-level: " << st.message() << "\n";
    return 2;
  }
  if (!log_file.empty())
    if (auto st = sy::log::add_file(log_file); !st) {
      std::cerr << "switchyard: --log-file: " << st.message() << "\n";
      return 2;
    }
  if (parse_only) return 0;
  return dispatch.run ? dispatch.run() : 2;
}

}  // namespace

// Every known way input can fail is a Status with its own sentence; this is the last line
// of defence, so that a failure nobody foresaw still ends with a sentence and status 1
// instead of std::terminate's abort.
int main(int argc, char** argv) {
  try {
    return run_command(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "switchyard: out of memory; the input asks for more memory than this machine has\n";
  } catch (const std::exception& e) {
    std::cerr << "switchyard: internal error: " << e.what() << " (please report this with the command that caused it)\n";
  } catch (...) {
    std::cerr << "switchyard: internal error of an unknown kind (please report this with the command that caused it)\n";
  }
  return 1;
}
