// switchyard template: renders a chat template with a JSON context, printing exactly the
// result (no newline added), or the error with its line and column and exit status 1.
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "chat/template.hpp"
#include "cli/commands.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace {

struct TemplateArgs {
  std::string tmpl, context, now;
};

int run_template(const TemplateArgs& a) {
  auto source = util::read_file(a.tmpl, "--template");
  if (!source) {
    std::cerr << "switchyard template: " << source.status().message() << "\n";
    return 1;
  }
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  if (!a.context.empty()) {
    auto text = util::read_file(a.context, "--context");
    if (!text) {
      std::cerr << "switchyard template: " << text.status().message() << "\n";
      return 1;
    }
    try {
      ctx = nlohmann::ordered_json::parse(*text);
    } catch (const std::exception& e) {
      std::cerr << "switchyard template: " << a.context << " is not valid JSON: " << e.what() << "\n";
      return 1;
    }
    if (!ctx.is_object()) {
      std::cerr << "switchyard template: " << a.context << " must hold a JSON object (the template's variables)\n";
      return 1;
    }
  }
  chat::RenderOptions opts;
  if (!a.now.empty()) {
    std::tm tm{};
    if (!strptime(a.now.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) {
      std::cerr << "switchyard template: --now must look like 2024-07-26T00:00:00\n";
      return 1;
    }
    std::tm copy = tm;
    (void)timegm(&copy);  // fills in the weekday and day of the year
    tm.tm_wday = copy.tm_wday;
    tm.tm_yday = copy.tm_yday;
    opts.now = tm;
  }
  auto t = chat::Template::parse(*source, a.tmpl);
  if (!t) {
    std::cerr << "switchyard template: " << t.status().message() << "\n";
    return 1;
  }
  auto out = t->render(chat::from_json(ctx), opts);
  if (!out) {
    std::cerr << "switchyard template: " << out.status().message() << "\n";
    return 1;
  }
  std::cout << *out << std::flush;
  return 0;
}

}  // namespace

void add_template_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<TemplateArgs>();
  auto* cmd = app.add_subcommand("template", "Render a chat template with a JSON context (printed exactly)");
  cmd->add_option("--template", a->tmpl, "The .jinja file")->required();
  cmd->add_option("--context", a->context, "JSON object with the variables (messages, tools, add_generation_prompt, ...)");
  cmd->add_option("--now", a->now, "Clock for strftime_now, e.g. 2024-07-26T00:00:00 (default: now)");
  cmd->callback([&d, a] { d.run = [a] { return run_template(*a); }; });
}

}  // namespace sy::cli
