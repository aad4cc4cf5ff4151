#include "cli/parse_errors.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <optional>

#include "cli/option_names.hpp"
#include "util/suggest.hpp"

namespace sy::cli {
namespace {

// The subcommand CLI11 was parsing when it failed (the root when none was reached).
const CLI::App& selected(const CLI::App& app) {
  const CLI::App* cur = &app;
  for (auto subs = cur->get_subcommands(); !subs.empty(); subs = cur->get_subcommands()) cur = subs.front();
  return *cur;
}

std::string help_hint(const CLI::App& cmd) {
  return cmd.get_parent() ? "switchyard help " + cmd.get_name() : "switchyard --help";
}

std::string see_help(const CLI::App& cmd) {
  return "See '" + help_hint(cmd) + "' for " +
         (cmd.get_parent() ? "the options and examples." : "the commands and the global options.");
}

// "-1" and "-.5" are values, not options: a negative number given where none was expected
// is a stray argument.
bool looks_like_option(const std::string& s) {
  return s.size() > 1 && s[0] == '-' && !std::isdigit(static_cast<unsigned char>(s[1])) && s[1] != '.';
}

std::string option_name(const std::string& arg) { return arg.substr(0, arg.find('=')); }

std::string strip_dashes(const std::string& s) { return s.substr(std::min(s.find_first_not_of('-'), s.size())); }

// Distance is measured without the dashes, so '-x' is not "close" to '-m' and '-temp' finds
// '--temp'.
std::optional<std::string> nearest_option(const CLI::App& cmd, const std::string& name) {
  const auto spellings = option_spellings(cmd);
  std::vector<std::string> bare;
  for (const auto& s : spellings) bare.push_back(strip_dashes(s));
  const auto best = sy::closest(strip_dashes(name), bare);
  if (!best) return std::nullopt;
  for (size_t i = 0; i < bare.size(); ++i)
    if (bare[i] == *best) return spellings[i];
  return std::nullopt;
}

void print_set_hint(const CLI::App& cmd) {
  if (find_option(cmd, "--set"))
    std::cerr << "Any pipeline key can be set with --set KEY=VALUE (e.g. --set context.length=8192); see '"
              << help_hint(cmd) << "'.\n";
  else
    std::cerr << see_help(cmd) << "\n";
}

// CLI11 reads '-ngll' as '-n gll' (a short option with its value attached), so a misspelt
// llama.cpp spelling or a long option typed with one dash ('-temp') surfaces as a bad value
// for another option. A one-dash word whose nearest spelling is longer than one letter was
// such a misspelling; it is reported instead of the error it caused.
bool report_misread_short(const CLI::App& cmd, const std::vector<std::string>& typed,
                          const std::vector<std::string>& parsed) {
  bool any = false;
  for (size_t i = 1; i < parsed.size(); ++i) {
    if (parsed[i] == "--") break;
    const std::string name = option_name(parsed[i]);
    if (name.size() <= 2 || name[1] == '-' || !looks_like_option(name) || find_option(cmd, name)) continue;
    // The value of the option before it (`-p -temp`) is text, not a misspelt option.
    if (parsed[i - 1].find('=') == std::string::npos)
      if (const CLI::Option* prev = find_option(cmd, parsed[i - 1]); prev && takes_value(*prev)) continue;
    const auto s = nearest_option(cmd, name);
    if (!s || s->size() <= 2) continue;
    std::cerr << command_path(cmd) << ": unknown option '" << option_name(typed[i]) << "'; did you mean '" << *s
              << "'?\n";
    any = true;
  }
  if (any) print_set_hint(cmd);
  return any;
}

struct Leftover {
  const CLI::App* owner;
  size_t index;  // into the argument vectors
};

// CLI11 keeps the words it could not place per command, without positions; each is matched
// to its first unclaimed occurrence after the program name, which restores the typed order.
std::vector<Leftover> leftovers(const CLI::App& app, const std::vector<std::string>& parsed) {
  std::vector<Leftover> out;
  std::vector<bool> claimed(parsed.size(), false);
  for (const CLI::App* cmd = &app; cmd;) {
    for (const auto& word : cmd->remaining())
      for (size_t i = 1; i < parsed.size(); ++i)
        if (!claimed[i] && parsed[i] == word) {
          claimed[i] = true;
          out.push_back({cmd, i});
          break;
        }
    const auto subs = cmd->get_subcommands();
    cmd = subs.empty() ? nullptr : subs.front();
  }
  // CLI11 gives the words after "--" to the root; typed after the command, they are the
  // command's.
  const CLI::App& cmd = selected(app);
  const auto at = std::find(parsed.begin() + 1, parsed.end(), cmd.get_name()) - parsed.begin();
  for (auto& w : out)
    if (w.owner == &app && static_cast<std::ptrdiff_t>(w.index) > at) w.owner = &cmd;
  std::sort(out.begin(), out.end(), [](const Leftover& a, const Leftover& b) { return a.index < b.index; });
  return out;
}

int report_extras(const CLI::App& app, const std::vector<std::string>& typed, const std::vector<std::string>& parsed) {
  const auto words = leftovers(app, parsed);
  // After "--" every word is an argument, whatever it looks like.
  const size_t end_of_options = static_cast<size_t>(std::find(parsed.begin(), parsed.end(), "--") - parsed.begin());
  const CLI::App* unknown_in = nullptr;
  size_t skip_index = 0;
  for (const auto& w : words) {
    if (skip_index != 0 && w.index == skip_index) continue;
    const CLI::App& cmd = *w.owner;
    const std::string& word = typed[w.index];
    const std::string label = command_path(cmd);
    if (w.index < end_of_options && looks_like_option(parsed[w.index])) {
      const std::string name = option_name(word);
      std::cerr << label << ": unknown option '" << name << "'";
      if (auto s = nearest_option(cmd, name)) {
        std::cerr << "; did you mean '" << *s << "'?";
        // `--tmep 0.7`: the next word is the misspelt option's value, not a second mistake.
        const CLI::Option* meant = find_option(cmd, *s);
        if (meant && takes_value(*meant) && word.find('=') == std::string::npos && w.index + 1 < parsed.size() &&
            !looks_like_option(parsed[w.index + 1]))
          skip_index = w.index + 1;
      }
      std::cerr << "\n";
      unknown_in = &cmd;
      continue;
    }
    std::cerr << label << ": unexpected argument '" << word << "'";
    if (w.index > 1 && looks_like_option(parsed[w.index - 1]) && parsed[w.index - 1].find('=') == std::string::npos)
      if (const CLI::Option* prev = find_option(cmd, parsed[w.index - 1]); prev && !takes_value(*prev))
        std::cerr << " (" << typed[w.index - 1] << " takes no value)";
    std::cerr << "\n";
  }
  if (unknown_in)
    print_set_hint(*unknown_in);
  else
    std::cerr << see_help(selected(app)) << "\n";
  return 2;
}

}  // namespace

int report_parse_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& typed,
                       const std::vector<std::string>& parsed) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    // --help and --version: CLI11 prints them (the help of the selected command).
    return app.exit(e);
  }
  const CLI::App& cmd = selected(app);
  if (report_misread_short(cmd, typed, parsed)) return 2;
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) return report_extras(app, typed, parsed);
  std::cerr << command_path(cmd) << ": " << e.what() << "\n" << see_help(cmd) << "\n";
  return 2;
}

}  // namespace sy::cli
