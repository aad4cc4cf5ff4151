// `switchyard help [COMMAND]`, and the examples at the end of every command's --help.
#pragma once

#include "cli/commands.hpp"

namespace sy::cli {

/// Adds the help command and gives every command its "Examples:" footer. Call it after all
/// other commands are added: it lists them and decorates each.
void add_help_command(CLI::App& app, Dispatch& d);

}  // namespace sy::cli
