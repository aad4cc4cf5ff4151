// switchyard chat: an interactive conversation with the model's chat template. Works in a
// terminal and with piped stdin. Multi-line input: end a line with '\' to continue, or
// wrap a block in """ lines. Commands: /reset /system TEXT /save FILE /load FILE /params
// /exit. Ctrl-C stops the current answer without quitting; Ctrl-D (end of input) quits.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "chat/prompt.hpp"
#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "cli/number_arg.hpp"
#include "cli/list_devices.hpp"
#include "cli/llama_flags.hpp"
#include "pipeline/emit.hpp"
#include "engine/runtime_setup.hpp"
#include "engine/recommended_sampling.hpp"
#include "engine/sampling.hpp"
#include "serving/local_session.hpp"
#include "pipeline/validate.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted = true; }

struct ChatArgs {
  PipelineFlags flags;
  std::string chat_template, system, system_file, prompt;
  int64_t n = -1;  // llama.cpp's default: until end of generation (or the context's end)
};

class Session {
 public:
  Session(engine::Runtime& rt, std::vector<pipeline::ComponentConfig> sampling, chat::Template tmpl, int64_t max_answer,
          int64_t batch_tokens)
      : rt_(rt), sampling_(std::move(sampling)), tmpl_(std::move(tmpl)), max_answer_(max_answer),
        // The prefix cache keeps the conversation's blocks, so a turn computes only what is new.
        session_(*rt.engine, rt.tokenizer.get(), *rt.registry, config(batch_tokens)) {}

  void set_system(std::string s) {
    system_ = std::move(s);
    reset();
  }
  void reset() { history_.clear(); }

  // One user turn: prompt, generate, stream, remember the answer.
  void turn(const std::string& user) {
    history_.push_back({"user", user});
    std::vector<int32_t> prompt;
    if (!fit(prompt)) {
      history_.pop_back();
      return;
    }
    auto req = std::make_shared<serving::Request>();
    req->prompt = prompt;
    req->params.max_tokens = max_answer_;
    req->params.sampling = sampling_;
    std::string answer, reason, error;
    g_interrupted = false;
    const auto st = session_.generate(req, [&](const serving::Event& e) {
      if (e.kind == serving::Event::Kind::text) {
        answer += e.text;
        std::cout << e.text << std::flush;
      } else if (e.kind == serving::Event::Kind::error) {
        error = e.error.message();
      } else {
        reason = e.finish_reason;
      }
    }, &g_interrupted);
    if (!st) error = st.message();
    if (reason == "context") std::cout << "\n[the context is full; the answer was cut]";
    std::cout << (reason == "cancelled" ? "\n[interrupted]\n" : "\n") << std::flush;
    if (!error.empty()) std::cerr << "error: " << error << "\n";
    if (!error.empty() && answer.empty()) {
      history_.pop_back();
      return;
    }
    history_.push_back({"assistant", answer});
  }

  /// An empty string when saved, else why not.
  std::string save(const std::string& path) const {
    nlohmann::ordered_json j;
    j["system"] = system_;
    j["messages"] = nlohmann::ordered_json::array();
    for (const auto& m : history_) j["messages"].push_back({{"role", m.role}, {"content", m.content}});
    if (auto st = util::check_output_path(path, "/save"); !st) return st.message();
    std::ofstream f(path, std::ios::trunc);
    f << json_text(j, 2) << "\n";
    f.close();
    return f ? std::string() : "cannot write " + path;
  }
  std::string load(const std::string& path) {
    auto text = util::read_file(path, "/load");
    if (!text) return text.status().message();
    try {
      const auto j = nlohmann::json::parse(*text);
      std::vector<chat::Message> h;
      for (const auto& m : j.at("messages")) h.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
      system_ = j.value("system", "");
      history_ = std::move(h);
    } catch (const std::exception& e) {
      return path + " is not a saved conversation: " + e.what();
    }
    return {};
  }
  [[nodiscard]] size_t turns() const { return history_.size(); }

 private:
  static serving::SchedulerConfig config(int64_t batch_tokens) {
    serving::SchedulerConfig c;
    c.batch_tokens = batch_tokens;
    return c;
  }

  std::vector<chat::Message> conversation() const {
    std::vector<chat::Message> m;
    if (!system_.empty()) m.push_back({"system", system_});
    m.insert(m.end(), history_.begin(), history_.end());
    return m;
  }

  // Renders and tokenizes the conversation, dropping the oldest turns while the prompt and
  // room for an answer exceed the context.
  bool fit(std::vector<int32_t>& prompt) {
    const int64_t ctx = rt_.engine->kv().config().n_ctx;
    const int64_t room = std::min<int64_t>(max_answer_, ctx / 4);
    size_t dropped = 0;
    for (;;) {
      auto text = chat::render_chat(tmpl_, conversation(), true, rt_.tokenizer.get());
      if (!text) {
        std::cerr << "error: chat template: " << text.status().message() << "\n";
        return false;
      }
      prompt = chat::tokenize_chat(*rt_.tokenizer, *text);
      if (static_cast<int64_t>(prompt.size()) + room <= ctx) break;
      if (history_.size() <= 1) {
        std::cerr << "error: this message alone (" << prompt.size() << " tokens) does not fit the " << ctx
                  << "-token context; shorten it or raise context.length\n";
        return false;
      }
      history_.erase(history_.begin(), history_.begin() + std::min<size_t>(2, history_.size() - 1));
      dropped += 2;
    }
    if (dropped > 0) std::cout << "[dropped the " << dropped << " oldest messages to fit the " << ctx << "-token context]\n";
    return true;
  }

  engine::Runtime& rt_;
  std::vector<pipeline::ComponentConfig> sampling_;
  chat::Template tmpl_;
  int64_t max_answer_;
  serving::LocalSession session_;
  std::string system_;
  std::vector<chat::Message> history_;
};

// Reads one user message: '\' at a line end continues it; """ lines wrap a block.
std::optional<std::string> read_message(bool tty) {
  std::string line, msg;
  if (tty) std::cout << "> " << std::flush;
  if (!std::getline(std::cin, line)) return std::nullopt;
  if (line == "\"\"\"") {
    while (std::getline(std::cin, line) && line != "\"\"\"") msg += (msg.empty() ? "" : "\n") + line;
    return msg;
  }
  while (!line.empty() && line.back() == '\\') {
    msg += line.substr(0, line.size() - 1) + "\n";
    if (tty) std::cout << ". " << std::flush;
    if (!std::getline(std::cin, line)) break;
  }
  return msg + line;
}

int run_chat(const ChatArgs& args) {
  ChatArgs a = args;
  if (a.flags.list_devices) return list_devices(std::cout);
  if (!a.prompt.empty() && a.flags.pipeline.empty())
    if (auto why = prompt_names_pipeline(a.prompt)) {
      std::cerr << "switchyard chat: " << *why << "\n";
      return 1;
    }
  auto loaded = load_with_flags("chat", a.flags);
  if (!loaded) return 1;
  pipeline::Pipeline& p = *loaded;
  if (a.flags.print_pipeline) {
    std::cout << pipeline::to_yaml(p);
    return 0;
  }
  if (!a.system_file.empty()) {
    if (!a.system.empty()) {
      std::cerr << "switchyard chat: give -sys TEXT or -sysf FILE, not both\n";
      return 1;
    }
    auto text = util::read_file(a.system_file, "--system-prompt-file");
    if (!text) {
      std::cerr << "switchyard chat: " << text.status().message() << "\n";
      return 1;
    }
    a.system = std::move(*text);
  }
  // -n -1: an answer may fill the context.
  if (a.n < 0) a.n = p.context.length;
  // Hybrid models keep a few recurrent-state checkpoints, so a turn resumes the conversation.
  auto rt = engine::bring_up(p, nullptr, false, 4);
  if (!rt) {
    std::cerr << "switchyard chat: " << rt.status().message() << "\n";
    return 1;
  }
  if (!(*rt)->tokenizer) {
    std::cerr << "switchyard chat: the model has no tokenizer (" << (*rt)->tokenizer_note << ")\n";
    return 1;
  }
  auto tmpl = chat::find_chat_template(a.chat_template, p.model.chat_template, p.model.tokenizer, (*rt)->model->metadata());
  if (!tmpl) {
    std::cerr << "switchyard chat: " << tmpl.status().message() << "\n";
    return 1;
  }
  // The model's recommended sampling fills what the pipeline left at the built-in defaults.
  if (const auto rec = engine::apply_recommended_sampling(p.sampling, (*rt)->model->metadata(), *(*rt)->registry);
      !rec.empty())
    std::cerr << "sampling: the model's recommended " << rec << " (general.sampling.*; set a sampler to override)\n";
  // The chain is made per answer; making one now reports a bad chain before the first turn.
  if (auto chain = engine::SamplerChain::create(*(*rt)->registry, p.sampling, std::nullopt); !chain) {
    std::cerr << "switchyard chat: " << chain.status().message() << "\n";
    return 1;
  }
  const bool tty = isatty(STDIN_FILENO) != 0;
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESTART;  // a Ctrl-C at the prompt does not abort the read
  sigaction(SIGINT, &sa, nullptr);
  auto parsed = chat::Template::parse(tmpl->first, tmpl->second);
  if (!parsed) {
    std::cerr << "switchyard chat: " << parsed.status().message() << "\n";
    return 1;
  }
  Session s(**rt, p.sampling, std::move(*parsed), a.n, p.context.batch);
  if (!a.system.empty()) s.set_system(a.system);
  if (tty)
    std::cout << "switchyard chat: " << p.model.path.filename().string()
              << ". Commands: /reset /system TEXT /save FILE /load FILE /params /exit; Ctrl-C stops an answer.\n";
  // -p: the first user message, as llama-cli sends its prompt in conversation mode.
  if (!a.prompt.empty()) {
    if (tty) std::cout << "> " << a.prompt << "\n";
    s.turn(a.prompt);
  }
  while (auto msg = read_message(tty)) {
    const std::string& m = *msg;
    if (m.empty()) continue;
    if (m == "/exit" || m == "/quit") break;
    if (m == "/reset") {
      s.reset();
      std::cout << "[conversation cleared]\n";
    } else if (m.rfind("/system", 0) == 0) {
      s.set_system(m.size() > 8 ? m.substr(8) : "");
      std::cout << "[system prompt set; conversation cleared]\n";
    } else if (m.rfind("/save ", 0) == 0) {
      const std::string err = s.save(m.substr(6));
      std::cout << (err.empty() ? "[saved to " + m.substr(6) + "]\n" : "[" + err + "]\n");
    } else if (m.rfind("/load ", 0) == 0) {
      const std::string err = s.load(m.substr(6));
      std::cout << (err.empty() ? "[loaded " + std::to_string(s.turns()) + " messages]\n" : "[" + err + "]\n");
    } else if (m == "/params") {
      std::cout << "[sampling:";
      for (const auto& c : p.sampling) {
        std::cout << " " << c.name;
        for (const auto& [k, v] : c.params.values()) std::cout << " " << k << "=" << param_value_to_string(v);
        std::cout << ";";
      }
      std::cout << " max answer " << a.n << " tokens; context " << p.context.length << "; template " << tmpl->second << "]\n";
    } else if (m[0] == '/') {
      std::cout << "[unknown command " << m.substr(0, m.find(' ')) << "; try /reset /system /save /load /params /exit]\n";
    } else {
      s.turn(m);
    }
  }
  return 0;
}

}  // namespace

void add_chat_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<ChatArgs>();
  auto* cmd = app.add_subcommand("chat", "Chat with a model interactively (or from piped stdin)");
  add_pipeline_flags(*cmd, a->flags, kAllRunFlags);
  cmd->add_option("-p,--prompt", a->prompt, "First user message (the pipeline file is -P)");
  cmd->add_option("--chat-template", a->chat_template, "A .jinja file to use instead of the model's chat template");
  cmd->add_option("--system-prompt,--system", a->system, "System prompt (-sys)");
  cmd->add_option("--system-prompt-file", a->system_file, "Read the system prompt from this file (-sysf)");
  cmd->add_option("-n,--n-predict,--max-tokens", a->n, "Most tokens per answer; -1 = until end of generation or a full context")
      ->capture_default_str()
      ->transform(integer_in(-1, kMaxTokens));
  cmd->callback([&d, a] { d.run = [a] { return run_chat(*a); }; });
}

}  // namespace sy::cli
