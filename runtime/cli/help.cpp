#include "cli/help.hpp"

#include <iostream>
#include <memory>

#include "cli/examples.hpp"
#include "cli/one_of.hpp"
#include "cli/option_names.hpp"

namespace sy::cli {

void add_help_command(CLI::App& app, Dispatch& d) {
  auto* cmd = app.add_subcommand("help", "Show the commands, or one command's options and examples");
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  auto command = std::make_shared<std::string>();
  cmd->add_option("command", *command, "The command to explain")->check(one_of(names, "command"));

  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (auto text = examples_text(sub->get_name()); !text.empty()) sub->footer(text);
  app.footer("Run 'switchyard help COMMAND' for a command's options and examples.");

  // The app outlives the parse and the dispatch (both happen inside main's scope).
  cmd->callback([&app, &d, command] {
    d.run = [&app, command] {
      // The formatter, not App::help(): help() would describe the selected command, which
      // is `help` itself here.
      const CLI::App* target = command->empty() ? &app : app.get_subcommand(*command);
      std::cout << target->get_formatter()->make_help(target, command_path(*target), CLI::AppFormatMode::Normal);
      return 0;
    };
  });
}

}  // namespace sy::cli
