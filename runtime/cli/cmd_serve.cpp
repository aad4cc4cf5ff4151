// switchyard serve: the model behind an OpenAI-compatible HTTP API (docs/server.md). The
// listener starts first, so /health answers 503 while the model loads; SIGINT or SIGTERM
// stops accepting, ends every running request and exits.
#include <pthread.h>
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "chat/prompt.hpp"
#include "cli/commands.hpp"
#include "cli/llama_flags.hpp"
#include "cli/list_devices.hpp"
#include "cli/number_arg.hpp"
#include "engine/recommended_sampling.hpp"
#include "engine/runtime_setup.hpp"
#include "log/log.hpp"
#include "pipeline/emit.hpp"
#include "server/api.hpp"
#include "server/http_server.hpp"
#include "util/read_file.hpp"

namespace sy::server {
std::string_view chat_page();
}

namespace sy::cli {
namespace {

struct ServeArgs {
  PipelineFlags flags;
  std::optional<std::string> host;
  std::optional<int64_t> port, slots, max_body;
  std::string api_key_file;
  std::vector<std::string> api_keys;
  std::string alias;
  std::string chat_template;
};

int fail(const std::string& msg) {
  std::cerr << "switchyard serve: " << msg << "\n";
  return 1;
}

// One key per line; blank lines and '#' comments are skipped.
Result<std::vector<std::string>> read_keys(const std::string& path) {
  auto text = util::read_file(path, "--api-key-file", 1 << 20);
  if (!text) return text.status();
  std::vector<std::string> keys;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    keys.push_back(line.substr(b, e - b + 1));
  }
  if (keys.empty()) return error::invalid_argument("--api-key-file " + path + " holds no key (one per line)");
  return keys;
}

std::string model_name(const std::filesystem::path& p) {
  const auto q = p.has_filename() ? p : p.parent_path();
  return std::filesystem::is_directory(q) ? q.filename().string() : q.stem().string();
}

int serve(const ServeArgs& args) {
  ServeArgs a = args;
  if (a.flags.list_devices) return list_devices(std::cout);
  auto loaded = load_with_flags("serve", a.flags);
  if (!loaded) return 1;
  pipeline::Pipeline& p = *loaded;
  if (a.host) p.server.host = *a.host;
  if (a.port) p.server.port = *a.port;
  if (a.slots) p.server.slots = *a.slots;
  if (a.max_body) p.server.max_body = *a.max_body;
  if (!a.alias.empty()) p.server.model_alias = a.alias;
  // Every slot is a sequence of the KV cache.
  p.context.parallel = std::max(p.context.parallel, p.server.slots);
  if (a.flags.print_pipeline) {
    std::cout << pipeline::to_yaml(p);
    return 0;
  }

  server::ServerSettings s;
  s.model_id = p.server.model_alias.empty() ? model_name(p.model.path) : p.server.model_alias;
  s.pipeline_name = a.flags.pipeline.empty() ? "built-in" : a.flags.pipeline;
  s.api_keys = p.server.api_keys;
  if (!p.server.api_key.empty()) s.api_keys.push_back(p.server.api_key);
  s.api_keys.insert(s.api_keys.end(), a.api_keys.begin(), a.api_keys.end());
  if (!a.api_key_file.empty()) {
    auto keys = read_keys(a.api_key_file);
    if (!keys) return fail(keys.status().message());
    s.api_keys.insert(s.api_keys.end(), keys->begin(), keys->end());
  }
  s.cors_origins = p.server.cors_origins;
  s.max_tokens = p.server.max_tokens;
  s.request_timeout_s = p.server.request_timeout;
  s.batch_queue = p.server.batch_queue;

  // Signals are taken by sigwait below, never by the worker threads started from here on.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  server::Api api(s, std::string(server::chat_page()));
  server::HttpOptions ho;
  ho.host = p.server.host;
  ho.port = static_cast<int>(p.server.port);
  ho.max_body = static_cast<uint64_t>(p.server.max_body);
  auto http = server::HttpServer::listen(ho, [&api](const server::HttpRequest& r, server::HttpResponder& w) { api.handle(r, w); });
  if (!http) return fail(http.status().message());
  std::thread http_thread([&] { (*http)->run(); });
  const auto port = (*http)->port();
  std::cerr << "switchyard serve: listening on http://" << p.server.host << ":" << port << " (loading the model)\n";
  auto stop_http = [&] {
    (*http)->stop();
    http_thread.join();
  };

  // Hybrid models keep recurrent-state checkpoints for the prefix cache: a few per slot.
  const int64_t checkpoints = std::min<int64_t>(4 * p.server.slots, 64);
  auto rt = engine::bring_up(p, nullptr, false, checkpoints);
  if (!rt) {
    stop_http();
    return fail(rt.status().message());
  }
  server::ServeContext ctx;
  ctx.runtime = rt->get();
  if (auto tmpl = chat::find_chat_template(a.chat_template, p.model.chat_template, p.model.tokenizer, (*rt)->model->metadata())) {
    auto parsed = chat::Template::parse(tmpl->first, tmpl->second);
    if (!parsed) {
      stop_http();
      return fail("chat template: " + parsed.status().message());
    }
    ctx.chat_template.emplace(std::move(*parsed));
    ctx.template_source = tmpl->first;
  } else {
    ctx.template_note = tmpl.status().message();
  }
  ctx.sampling = p.sampling;
  if (const auto rec = engine::apply_recommended_sampling(ctx.sampling, (*rt)->model->metadata(), *(*rt)->registry); !rec.empty())
    std::cerr << "sampling: the model's recommended " << rec << " (general.sampling.*; a request's fields override)\n";
  ctx.schemas = server::openai::SamplerSchemas::from(*(*rt)->registry);
  ctx.settings = s;
  ctx.n_ctx = p.context.length;
  serving::Metrics metrics;
  serving::SchedulerConfig sc;
  sc.slots = p.server.slots;
  sc.batch_tokens = p.context.batch;
  sc.max_waiting = p.server.max_queue;
  sc.max_step_s = static_cast<double>(p.server.max_step_ms) / 1000.0;
  serving::Scheduler sched(*(*rt)->engine, (*rt)->tokenizer.get(), *(*rt)->registry, sc, &metrics);
  sched.start();
  ctx.scheduler = &sched;
  ctx.metrics = &metrics;
  api.set_ready(&ctx);
  std::cerr << "switchyard serve: ready: model '" << s.model_id << "', " << sc.slots << " slots, context " << ctx.n_ctx
            << (s.api_keys.empty() ? "" : ", API keys required") << "; Ctrl-C stops\n";

  int sig = 0;
  sigwait(&sigs, &sig);
  std::cerr << "switchyard serve: stopping (" << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << ")\n";
  (*http)->stop();
  sched.stop();  // every running request ends, so its connection can answer and close
  http_thread.join();
  api.set_ready(nullptr);
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "Serve the model over an OpenAI-compatible HTTP API (docs/server.md)");
  add_pipeline_flags(*cmd, a->flags, kAllRunFlags);
  cmd->add_option("--host", a->host, "Address to listen on (server.host; default 127.0.0.1)");
  cmd->add_option("--port", a->port, "Port to listen on; 0 picks a free one (server.port; default 8080)")
      ->transform(integer_in(0, 65535));
  cmd->add_option("--slots", a->slots, "Requests generated at once (server.slots; llama-server's -np)")->transform(integer_in(1, 4096));
  cmd->add_option("--api-key", a->api_keys, "Require this API key (repeatable; prefer --api-key-file: a flag shows in ps)");
  cmd->add_option("--api-key-file", a->api_key_file, "Require one of the API keys in this file (one per line)");
  cmd->add_option("-a,--alias", a->alias, "The model id clients use (server.model_alias; default: the model file's name)");
  cmd->add_option("--max-body", a->max_body, "Largest request body in bytes (server.max_body)")->transform(integer_in(1024, 1 << 30));
  cmd->add_option("--chat-template", a->chat_template, "A .jinja file to use instead of the model's chat template");
  cmd->callback([&d, a] { d.run = [a] { return serve(*a); }; });
}

}  // namespace sy::cli
