#include "cli/option_names.hpp"

#include "cli/llama_aliases.hpp"

namespace sy::cli {

std::string command_path(const CLI::App& cmd) {
  return cmd.get_parent() ? command_path(*cmd.get_parent()) + " " + cmd.get_name() : cmd.get_name();
}

std::vector<std::string> option_spellings(const CLI::App& cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden: kept for a better error, never offered
    for (const auto& l : opt->get_lnames()) {
      const std::string name = "--" + l;
      out.push_back(name);
      for (const auto& [shortname, longname] : llama_short_aliases())
        if (longname == name) out.emplace_back(shortname);
    }
    for (const auto& s : opt->get_snames()) out.push_back("-" + s);
  }
  return out;
}

const CLI::Option* find_option(const CLI::App& cmd, const std::string& name) {
  for (const auto& [shortname, longname] : llama_short_aliases())
    if (name == shortname) return find_option(cmd, std::string(longname));
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const auto& l : opt->get_lnames())
      if (name == "--" + l) return opt;
    for (const auto& s : opt->get_snames())
      if (name == "-" + s) return opt;
  }
  return nullptr;
}

}  // namespace sy::cli
