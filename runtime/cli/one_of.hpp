// A closed set of words for an option or positional (a command name, a shell). The set is
// the validator's description, "{a,b}", which CLI11 shows in --help and the completion
// script reads back as the words to offer.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "util/suggest.hpp"

namespace sy::cli {

/// Accepts exactly the given words; anything else is refused with the nearest word and the
/// full list, e.g. "no such command 'rnu'; did you mean 'run'? (one of: plugins, run)".
inline CLI::Validator one_of(std::vector<std::string> words, std::string what) {
  std::string set, list;
  for (const auto& w : words) {
    set += (set.empty() ? "" : ",") + w;
    list += (list.empty() ? "" : ", ") + w;
  }
  return CLI::Validator(
      [words, what, list](std::string& s) -> std::string {
        for (const auto& w : words)
          if (s == w) return {};
        std::string msg = "no such " + what + " '" + s + "'";
        if (auto near = sy::closest(s, words)) msg += "; did you mean '" + *near + "'?";
        return msg + " (one of: " + list + ")";
      },
      "{" + set + "}");
}

}  // namespace sy::cli
