// How commands and options are spelt on the command line, read from the CLI11 definitions;
// shared by the parse-error hints, the help command and the completion script.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sy::cli {

/// The command's full name as typed, e.g. "switchyard run".
std::string command_path(const CLI::App& cmd);

/// Every name an option of `cmd` can be written as: --long, -s, and llama.cpp's
/// multi-letter short spellings (-ngl) of its long options, in definition order.
std::vector<std::string> option_spellings(const CLI::App& cmd);

/// The option `name` (any spelling above) stands for in `cmd`, or nullptr.
const CLI::Option* find_option(const CLI::App& cmd, const std::string& name);

/// True when the option is followed by a value (false for flags such as --json).
inline bool takes_value(const CLI::Option& opt) { return opt.get_expected_max() > 0; }

}  // namespace sy::cli
