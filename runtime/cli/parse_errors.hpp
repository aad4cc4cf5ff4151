// Command-line mistakes reported as switchyard's other errors are: a sentence that names the
// command, what was wrong and the nearest correct spelling. CLI11's own ExtrasError lists
// unknown words in reverse order with no hint, so those are rebuilt here.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sy::cli {

/// Prints `e` (thrown by `app.parse`) to stderr and returns the exit status: 0 after
/// printing --help or --version, 2 for every mistake. `typed` is argv as the user wrote it
/// and `parsed` what CLI11 was given (llama.cpp's short spellings expanded, one for one), so
/// messages quote the user's own spelling.
int report_parse_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& typed,
                       const std::vector<std::string>& parsed);

}  // namespace sy::cli
