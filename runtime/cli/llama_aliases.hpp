// llama.cpp spells some options as one dash and several letters (-ngl, -ctk, -fa), which
// CLI11 cannot declare. They are rewritten to their long forms before parsing, so each
// command declares only the long names.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sy::cli {

/// llama.cpp's multi-letter short options and the long option each stands for.
const std::vector<std::pair<std::string_view, std::string_view>>& llama_short_aliases();

/// The arguments with every multi-letter short option (alone or as `-ngl=99`) replaced by
/// its long form. Left as they are: arguments after `--`, and a word right after an option
/// for which `takes_value` (given the option as typed) is true, since it is that value.
std::vector<std::string> expand_llama_aliases(int argc, const char* const* argv,
                                              const std::function<bool(const std::string&)>& takes_value);

}  // namespace sy::cli
