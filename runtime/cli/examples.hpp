// Worked examples for every command, shown by `switchyard help COMMAND` and at the end of
// `switchyard COMMAND --help`. One table, so the help text and the test that runs each
// example line (tests/integration/help.sh) read the same lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sy::cli {

/// One example: the command it belongs to, a complete shell command line, and what it does.
struct Example {
  std::string_view command;
  std::string_view line;
  std::string_view what;
};

/// Every example, grouped by command in the order commands are listed.
const std::vector<Example>& examples();

/// The "Examples:" section for one command (each line, then its explanation indented
/// under it), or an empty string when the command has none.
std::string examples_text(std::string_view command);

}  // namespace sy::cli
