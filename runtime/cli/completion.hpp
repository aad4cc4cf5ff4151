// `switchyard completion bash`: a completion script generated at run time from the command
// definitions, so it never lists a flag this build lacks or misses one it has.
#pragma once

#include <string>

#include "cli/commands.hpp"

namespace sy::cli {

/// Adds the completion command; the script it prints covers every command of `app`,
/// so add it after the others.
void add_completion_command(CLI::App& app, Dispatch& d);

/// The bash completion script for `app`'s commands, options, option values that are files,
/// and closed sets of words (validators whose description is "{a,b}").
std::string bash_completion(const CLI::App& app);

}  // namespace sy::cli
