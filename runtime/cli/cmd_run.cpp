// switchyard run: one prompt (text through the model's tokenizer, or ids), N generated
// tokens streamed as text when the model has a tokenizer. Generation is one request on the
// serving layer (serving/local_session.hpp), as `serve` runs them: prefill in chunks of
// context.batch tokens, then one decode step per token. --force-ids feeds given ids
// instead of the sampled ones (teacher forcing) so logits can be compared step by step.
// The flags are llama-cli's (docs/cli.md); the limits are checked before generating, and
// whatever was generated is printed even when generation ends early (error, Ctrl-C).
#include <chrono>
#include <csignal>
#include <unistd.h>

#include <atomic>

#include <filesystem>
#include <iterator>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>

#include "chat/prompt.hpp"
#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "cli/number_arg.hpp"
#include "cli/list_devices.hpp"
#include "cli/llama_flags.hpp"
#include "pipeline/emit.hpp"
#include "engine/routing_stats.hpp"
#include "engine/runtime_setup.hpp"
#include "engine/recommended_sampling.hpp"
#include "engine/sampling.hpp"
#include "serving/local_session.hpp"
#include "pipeline/validate.hpp"
#include "util/parse_number.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_run_sigint(int) { g_interrupted = true; }

struct RunArgs {
  PipelineFlags flags;
  std::string prompt;
  bool prompt_given = false;
  std::string prompt_ids;
  std::string force_ids;
  int64_t n = -1;  // llama.cpp's default: until end of generation or a full context
  bool n_given = false;
  std::string system_prompt, system_prompt_file;
  bool json = false;
  bool chat = false;
  bool ignore_eos = false;
  std::vector<std::string> stops;
  std::string prompt_file;
  std::string chat_template;
  std::string logits_out;
  bool routing_stats = false;
};

nlohmann::ordered_json routing_json(const engine::RoutingSummary& r) {
  nlohmann::ordered_json j;
  j["moe_layers"] = r.layers.size();
  j["experts"] = r.experts;
  j["picks_per_layer"] = r.picks_per_layer;
  j["fewest_experts_chosen"] = r.fewest_experts_chosen;
  j["worst_max_over_mean"] = r.worst_max_over_mean;
  j["worst_layer"] = r.worst_layer;
  for (const auto& l : r.layers)
    j["per_layer"].push_back({{"experts_chosen", l.experts_chosen}, {"min", l.min}, {"max", l.max}, {"max_over_mean", l.max_over_mean}});
  return j;
}

std::optional<std::vector<int32_t>> parse_ids(const std::string& s, std::string& err) {
  std::vector<int32_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    item = item.substr(b, e - b + 1);
    const auto v = util::parse_integer<int32_t>(item, 0, INT32_MAX);
    if (!v.ok()) {
      err = "'" + item + "' is not a token id (expected integers from 0 to " + std::to_string(INT32_MAX) +
            " separated by commas)";
      return std::nullopt;
    }
    out.push_back(v.value);
  }
  return out;
}

nlohmann::ordered_json logits_line(int64_t pos, std::span<const float> l) {
  std::vector<int32_t> order(l.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t k = std::min<size_t>(20, l.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](int32_t a, int32_t b) { return l[static_cast<size_t>(a)] > l[static_cast<size_t>(b)] ||
                                                       (l[static_cast<size_t>(a)] == l[static_cast<size_t>(b)] && a < b); });
  nlohmann::ordered_json top = nlohmann::ordered_json::array();
  for (size_t i = 0; i < k; ++i) top.push_back({order[i], l[static_cast<size_t>(order[i])]});
  return {{"pos", pos}, {"top", top}, {"logits", std::vector<float>(l.begin(), l.end())}};
}

int fail(const std::string& msg) {
  std::cerr << "switchyard run: " << msg << "\n";
  return 1;
}

// What generation produced so far; printed whichever way generation ends.
struct Outcome {
  std::vector<int32_t> prompt, ids, sampled;
  std::string text;
  std::string stop_reason = "length";
  std::string error;
  double prompt_ms = 0, gen_ms = 0;
  int64_t ctx = 0;
};

int report(const RunArgs& a, const Outcome& o, const engine::Runtime& rt, bool force, bool has_text) {
  const auto& eng = *rt.engine;
  const auto& st = eng.stats();
  const double p_tps = o.prompt_ms > 0 ? 1000.0 * static_cast<double>(o.prompt.size()) / o.prompt_ms : 0.0;
  // The first token comes out of the prompt's step; generation time covers the steps after
  // it, one token each (llama.cpp's eval time counts the same).
  const auto steps = static_cast<int64_t>(o.ids.size()) - 1;
  const double g_tps = o.gen_ms > 0 && steps > 0 ? 1000.0 * static_cast<double>(steps) / o.gen_ms : 0.0;
  if (a.json) {
    nlohmann::ordered_json j;
    j["prompt_ids"] = o.prompt;
    j["ids"] = o.ids;
    if (has_text) j["text"] = o.text;
    j["stop_reason"] = o.stop_reason;
    if (!o.error.empty()) j["error"] = o.error;
    if (force) j["sampled_ids"] = o.sampled;
    j["timings"] = {{"prompt_ms", o.prompt_ms},
                    {"prompt_tokens", o.prompt.size()},
                    {"prompt_tokens_per_s", p_tps},
                    {"generation_ms", o.gen_ms},
                    {"generated_tokens", o.ids.size()},
                    {"generation_steps", std::max<int64_t>(steps, 0)},
                    {"tokens_per_s", g_tps}};
    j["stats"] = {{"fallback_nodes", st.fallback_nodes},
                  {"distinct_fallbacks", st.distinct_fallbacks},
                  {"converted_weights", rt.model->weights().converted()},
                  {"weights_bytes", rt.model->weights().bytes()},
                  {"weights_mapped_bytes", rt.model->weights().mapped_bytes()},
                  {"weights_locked_bytes", rt.model->weights().locked_bytes()},
                  {"weights_prefaulted_bytes", rt.model->weights().prefaulted_bytes()},
                  {"weights_repacked_bytes", rt.model->weights().repacked_bytes()},
                  {"weights_kept_on_host", rt.model->weights().kept_on_host()},
                  {"transfers", st.transfers},
                  {"transfer_bytes", st.transfer_bytes},
                  // The last step is a decode step whenever a token was generated.
                  {"last_step_transfer_bytes", st.last_step_transfer_bytes},
                  {"arena_bytes", st.arena_bytes}};
    // Bytes placed per device and component, in `plan --json`'s terms (devices[].weights...).
    const auto& placed = rt.model->weights().placed();
    const auto& kv = eng.kv_cache();
    for (size_t d = 0; d < rt.devices.size(); ++d)
      j["devices"].push_back({{"name", rt.names[d].portable},
                              {"device", rt.names[d].own},
                              {"weights", placed[d].weights},
                              {"expert_weights", placed[d].expert_weights},
                              {"kv", kv.kv_bytes()[d]},
                              {"recurrent", kv.state_bytes()[d]}});
    if (a.routing_stats) j["routing"] = routing_json(engine::summarize_routing(eng.routing_counts()));
    std::cout << json_text(j) << "\n" << std::flush;
  } else {
    std::cerr << "prompt: " << o.prompt.size() << " tokens in " << o.prompt_ms << " ms (" << p_tps << " tokens/s); "
              << "generation: " << o.ids.size() << " tokens, " << std::max<int64_t>(steps, 0) << " steps after the first in "
              << o.gen_ms << " ms (" << g_tps << " tokens/s)\n";
    if (o.stop_reason == "context") std::cerr << "stopped: the context is full (context.length " << o.ctx << ")\n";
    if (o.stop_reason == "interrupted") std::cerr << "stopped: interrupted\n";
    if (st.fallback_nodes > 0)
      std::cerr << "fallbacks: " << st.fallback_nodes << " nodes ran off their preferred device\n";
    if (a.routing_stats) {
      const auto r = engine::summarize_routing(eng.routing_counts());
      std::cerr << "routing: " << r.layers.size() << " MoE layers; fewest experts chosen in a layer: "
                << r.fewest_experts_chosen << "/" << r.experts << "; busiest expert: " << r.worst_max_over_mean
                << "x the mean (layer " << r.worst_layer << ")\n";
    }
  }
  if (!o.error.empty()) std::cerr << "switchyard run: " << o.error << "\n";
  if (o.stop_reason == "interrupted") return 130;
  return o.error.empty() ? 0 : 1;
}

int run(const RunArgs& args) {
  RunArgs a = args;
  if (a.flags.list_devices) return list_devices(std::cout);
  if (a.prompt_given && a.flags.pipeline.empty())
    if (auto why = prompt_names_pipeline(a.prompt)) return fail(*why);
  auto loaded = load_with_flags("run", a.flags);
  if (!loaded) return 1;
  pipeline::Pipeline& p = *loaded;
  if (a.flags.print_pipeline) {
    std::cout << pipeline::to_yaml(p);
    return 0;
  }

  std::string err;
  std::vector<int32_t> prompt, force;
  // The prompt text may also come from -f or, when nothing else is given, stdin.
  if (!a.prompt_file.empty()) {
    if (a.prompt_given || !a.prompt_ids.empty()) return fail("give one prompt: -p TEXT, -f FILE or --prompt-ids");
    auto text = util::read_file(a.prompt_file, "--file");
    if (!text) return fail(text.status().message());
    a.prompt = std::move(*text);
    a.prompt_given = true;
  } else if (!a.prompt_given && a.prompt_ids.empty() && !isatty(STDIN_FILENO)) {
    a.prompt.assign(std::istreambuf_iterator<char>(std::cin), {});
    a.prompt_given = !a.prompt.empty();
  }
  if (!a.system_prompt_file.empty()) {
    if (!a.system_prompt.empty()) return fail("give -sys TEXT or -sysf FILE, not both");
    auto text = util::read_file(a.system_prompt_file, "--system-prompt-file");
    if (!text) return fail(text.status().message());
    a.system_prompt = std::move(*text);
  }
  if (!a.system_prompt.empty()) a.chat = true;  // a system prompt only has a meaning in the chat template
  if (a.prompt_given && !a.prompt_ids.empty()) return fail("give either -p TEXT or --prompt-ids, not both");
  if (!a.prompt_given && a.prompt_ids.empty()) return fail("give a prompt: -p TEXT, -f FILE or --prompt-ids 1,2,3");
  if (!a.prompt_ids.empty()) {
    if (auto ids = parse_ids(a.prompt_ids, err)) prompt = *ids; else return fail("--prompt-ids: " + err);
    if (prompt.empty()) return fail("--prompt-ids is empty");
  }
  if (!a.force_ids.empty()) {
    if (auto ids = parse_ids(a.force_ids, err)) force = *ids; else return fail("--force-ids: " + err);
  }
  int64_t n = a.n_given || force.empty() ? a.n : static_cast<int64_t>(force.size());
  if (!force.empty() && (n < 0 || static_cast<int64_t>(force.size()) < n))
    return fail("--force-ids has " + std::to_string(force.size()) + " ids but -n asks for " +
                (n < 0 ? std::string("every token until the context is full") : std::to_string(n)));

  // Output paths are checked before the model loads, so a typo costs no waiting.
  if (!a.logits_out.empty())
    if (auto st = util::check_output_path(a.logits_out, "--logits-out"); !st) return fail(st.message());

  auto rt = engine::bring_up(p, nullptr, a.routing_stats);
  if (!rt) return fail(rt.status().message());
  auto& eng = *(*rt)->engine;
  const tok::Tokenizer* tk = (*rt)->tokenizer.get();
  if (a.prompt_given) {
    if (!tk) return fail("-p needs a tokenizer and this model has none (" + (*rt)->tokenizer_note +
                         "); set model.tokenizer in the pipeline or pass --prompt-ids");
    if (a.chat) {
      auto tmpl = chat::find_chat_template(a.chat_template, p.model.chat_template, p.model.tokenizer,
                                           (*rt)->model->metadata());
      if (!tmpl) return fail(tmpl.status().message());
      auto parsed = chat::Template::parse(tmpl->first, tmpl->second);
      if (!parsed) return fail("chat template: " + parsed.status().message());
      std::vector<chat::Message> messages;
      if (!a.system_prompt.empty()) messages.push_back({"system", a.system_prompt});
      messages.push_back({"user", a.prompt});
      auto text = chat::render_chat(*parsed, messages, true, tk);
      if (!text) return fail("chat template: " + text.status().message());
      prompt = chat::tokenize_chat(*tk, *text);
    } else {
      prompt = tk->encode(a.prompt, true, true);
    }
    if (prompt.empty()) return fail("-p gave no tokens");
  } else if (a.chat) {
    return fail("--chat and -sys need a text prompt (-p TEXT)");
  }

  // Limits up front: the prompt must fit, and the answer stops where the context ends.
  const int64_t ctx = eng.kv().config().n_ctx;
  const auto plen = static_cast<int64_t>(prompt.size());
  if (plen >= ctx)
    return fail("the prompt has " + std::to_string(plen) + " tokens and the context holds " + std::to_string(ctx) +
                " (context.length), leaving no room to generate; raise -c or shorten the prompt");
  const int64_t room = ctx - plen + 1;  // the last token is sampled, never stored
  if (n > room)
    std::cerr << "note: the prompt's " << plen << " tokens and -n " << n << " exceed the " << ctx
              << "-token context; generation stops when the context is full, after at most " << room << " tokens\n";
  const int64_t limit = n < 0 ? room : std::min(n, room);

  // The model's recommended sampling fills what the pipeline left at the built-in defaults.
  if (const auto rec = engine::apply_recommended_sampling(p.sampling, (*rt)->model->metadata(), *(*rt)->registry);
      !rec.empty())
    std::cerr << "sampling: the model's recommended " << rec << " (general.sampling.*; set a sampler to override)\n";

  std::ofstream lout;
  if (!a.logits_out.empty()) {
    lout.open(a.logits_out, std::ios::trunc);
    if (!lout) return fail("cannot write --logits-out file " + a.logits_out);
  }
  // Ctrl-C ends generation and still prints what was generated; a second one kills.
  g_interrupted = false;
  struct sigaction sa {};
  sa.sa_handler = on_run_sigint;
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);

  Outcome o;
  o.prompt = prompt;
  o.ctx = ctx;
  auto req = std::make_shared<serving::Request>();
  req->prompt = prompt;
  req->params.max_tokens = limit;
  req->params.stop = a.stops;
  req->params.ignore_eos = a.ignore_eos;
  req->params.force_ids = force;
  req->params.sampling = p.sampling;
  // is_open(), not the stream's state: a stream never opened is "good", and taking every
  // step's logits then formats the whole vocabulary to JSON per token for nothing.
  req->params.final_logits = lout.is_open();
  if (lout.is_open())
    req->on_logits = [&lout](int64_t pos, std::span<const float> l) { lout << json_text(logits_line(pos, l)) << "\n"; };
  serving::SchedulerConfig sc;
  sc.batch_tokens = p.context.batch;
  sc.prefix_cache = false;
  serving::LocalSession session(eng, tk, *(*rt)->registry, sc);
  const auto st = session.generate(req, [&](const serving::Event& e) {
    if (e.kind == serving::Event::Kind::text) {
      o.ids.insert(o.ids.end(), e.tokens.begin(), e.tokens.end());
      if (!force.empty()) o.sampled.push_back(e.sampled);
      o.text += e.text;
      if (!a.json) {
        if (tk) std::cout << e.text << std::flush;
        else for (int32_t id : e.tokens) std::cout << id << " " << std::flush;
      }
    } else if (e.kind == serving::Event::Kind::error) {
      o.error = e.error.message();
    } else {
      o.stop_reason = e.finish_reason == "cancelled" ? "interrupted" : e.finish_reason;
    }
  }, &g_interrupted);
  if (!st) o.error = st.message();
  signal(SIGINT, SIG_DFL);
  const auto& t = req->timings;
  if (t.first_token > t.admitted) {
    o.prompt_ms = std::chrono::duration<double, std::milli>(t.first_token - t.admitted).count();
    o.gen_ms = std::chrono::duration<double, std::milli>(t.finished - t.first_token).count();
  }
  // -n -1, or an -n past the context, ended because the context is full.
  if (o.stop_reason == "length" && o.error.empty() && (n < 0 || n > limit)) o.stop_reason = "context";
  if (!a.json) std::cout << "\n" << std::flush;
  return report(a, o, **rt, !force.empty(), tk != nullptr);
}

}  // namespace

void add_run_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Generate text for one prompt (llama-cli's flags; see docs/cli.md)");
  add_pipeline_flags(*cmd, a->flags, kAllRunFlags);
  cmd->add_option("-p,--prompt", a->prompt, "Prompt text (the pipeline file is -P)");
  cmd->add_option("-f,--file,--prompt-file", a->prompt_file, "Read the prompt text from this file");
  cmd->add_option("--prompt-ids", a->prompt_ids, "Prompt as token ids: 1,2,3");
  cmd->add_option("-n,--n-predict", a->n, "Tokens to generate; -1 = until end of generation or a full context")
      ->capture_default_str()
      ->transform(integer_in(-1, kMaxTokens));
  cmd->add_option("--system-prompt", a->system_prompt, "System message, in the chat template (-sys; implies --chat)");
  cmd->add_option("--system-prompt-file", a->system_prompt_file, "Read the system message from this file (-sysf)");
  cmd->add_flag("--json", a->json, "Print one JSON object: prompt_ids, ids, text, stop_reason, timings");
  cmd->add_option("--stop", a->stops, "Stop when the output contains this text (repeatable; matched across tokens)");
  cmd->add_flag("--ignore-eos", a->ignore_eos, "Keep generating past end-of-generation tokens");
  cmd->add_flag("--chat", a->chat, "Wrap the prompt as one user message in the model's chat template");
  cmd->add_option("--chat-template", a->chat_template, "A .jinja file to use instead of the model's chat template");
  cmd->add_option("--logits-out", a->logits_out, "Write one JSON line of logits per position to FILE");
  cmd->add_flag("--routing-stats", a->routing_stats,
                "Count which experts each MoE layer picks (every token runs the last layer; --json: \"routing\")");
  cmd->add_option("--force-ids", a->force_ids, "Feed these ids one per step instead of the sampled ones");
  cmd->callback([&d, a, cmd] {
    a->n_given = cmd->count("-n") > 0;
    a->prompt_given = cmd->count("--prompt") > 0;
    d.run = [a] { return run(*a); };
  });
}

}  // namespace sy::cli
