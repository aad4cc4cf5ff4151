// switchyard run: one prompt (text through the model's tokenizer, or ids), N generated
// tokens streamed as text when the model has a tokenizer. Prefill is one batch (logits only for
// the last prompt position), then one decode step per token. --force-ids feeds given ids
// instead of the sampled ones (teacher forcing) so logits can be compared step by step.
#include <chrono>
#include <unistd.h>

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
#include "cli/pipeline_arg.hpp"
#include "engine/routing_stats.hpp"
#include "engine/runtime_setup.hpp"
#include "engine/sampling.hpp"
#include "engine/stop.hpp"
#include "pipeline/validate.hpp"
#include "util/parse_number.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace {

struct RunArgs {
  std::string pipeline;
  std::string model;
  std::string prompt;
  bool prompt_given = false;
  std::string prompt_ids;
  std::string force_ids;
  int64_t n = 16;
  bool n_given = false;
  std::optional<int64_t> seed;
  std::vector<std::string> sets;
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

int run(const RunArgs& args) {
  RunArgs a = args;
  auto loaded = pipeline_from_args("run", a.pipeline, a.model, a.sets);
  if (!loaded) return 1;
  pipeline::Pipeline& p = *loaded;

  std::string err;
  std::vector<int32_t> prompt, force;
  // The prompt text may also come from --prompt-file or, when nothing else is given, stdin.
  if (!a.prompt_file.empty()) {
    if (a.prompt_given || !a.prompt_ids.empty()) return fail("give one prompt: --prompt, --prompt-file or --prompt-ids");
    auto text = util::read_file(a.prompt_file, "--prompt-file");
    if (!text) return fail(text.status().message());
    a.prompt = std::move(*text);
    a.prompt_given = true;
  } else if (!a.prompt_given && a.prompt_ids.empty() && !isatty(STDIN_FILENO)) {
    a.prompt.assign(std::istreambuf_iterator<char>(std::cin), {});
    a.prompt_given = !a.prompt.empty();
  }
  if (a.prompt_given && !a.prompt_ids.empty())
    return fail("give either --prompt or --prompt-ids, not both");
  if (!a.prompt_given && a.prompt_ids.empty()) return fail("give a prompt: --prompt TEXT or --prompt-ids 1,2,3");
  if (!a.prompt_ids.empty()) {
    if (auto ids = parse_ids(a.prompt_ids, err)) prompt = *ids; else return fail("--prompt-ids: " + err);
    if (prompt.empty()) return fail("--prompt-ids is empty");
  }
  if (!a.force_ids.empty()) {
    if (auto ids = parse_ids(a.force_ids, err)) force = *ids; else return fail("--force-ids: " + err);
  }
  const int64_t n = a.n_given || force.empty() ? a.n : static_cast<int64_t>(force.size());
  if (n < 0) return fail("-n must not be negative");
  if (static_cast<int64_t>(force.size()) < n && !force.empty())
    return fail("--force-ids has " + std::to_string(force.size()) + " ids but -n asks for " + std::to_string(n));

  // Output paths are checked before the model loads, so a typo costs no waiting.
  if (!a.logits_out.empty())
    if (auto st = util::check_output_path(a.logits_out, "--logits-out"); !st) return fail(st.message());

  auto rt = engine::bring_up(p, nullptr, a.routing_stats);
  if (!rt) return fail(rt.status().message());
  auto& eng = *(*rt)->engine;
  const tok::Tokenizer* tk = (*rt)->tokenizer.get();
  if (a.prompt_given) {
    if (!tk) return fail("--prompt needs a tokenizer and this model has none (" + (*rt)->tokenizer_note +
                         "); set model.tokenizer in the pipeline or pass --prompt-ids");
    if (a.chat) {
      auto tmpl = chat::find_chat_template(a.chat_template, p.model.chat_template, p.model.tokenizer,
                                           (*rt)->model->metadata());
      if (!tmpl) return fail(tmpl.status().message());
      auto parsed = chat::Template::parse(tmpl->first, tmpl->second);
      if (!parsed) return fail("chat template: " + parsed.status().message());
      auto text = chat::render_chat(*parsed, {{"user", a.prompt}}, true, tk);
      if (!text) return fail("chat template: " + text.status().message());
      prompt = chat::tokenize_chat(*tk, *text);
    } else {
      prompt = tk->encode(a.prompt, true, true);
    }
    if (prompt.empty()) return fail("--prompt gave no tokens");
  } else if (a.chat) {
    return fail("--chat needs a text --prompt");
  }
  auto chain = engine::SamplerChain::create(*(*rt)->registry, p.sampling, a.seed);
  if (!chain) return fail(chain.status().message());

  std::ofstream lout;
  if (!a.logits_out.empty()) {
    lout.open(a.logits_out, std::ios::trunc);
    if (!lout) return fail("cannot write --logits-out file " + a.logits_out);
  }
  if (auto st = eng.kv().add(0); !st) return fail(st.message());

  using clock = std::chrono::steady_clock;
  std::vector<engine::BatchToken> batch;
  for (size_t i = 0; i < prompt.size(); ++i) batch.push_back({0, prompt[i], i + 1 == prompt.size()});
  std::vector<float> logits;
  const auto t0 = clock::now();
  if (auto st = eng.decode(batch, logits); !st) return fail(st.message());
  const auto t1 = clock::now();
  int64_t pos = static_cast<int64_t>(prompt.size()) - 1;
  if (lout) lout << json_text(logits_line(pos, logits)) << "\n";

  std::vector<int32_t> ids, sampled;
  std::optional<tok::StreamDecoder> stream;
  std::vector<std::string> pieces;  // token texts, for samplers that look at them (dry)
  if (tk) {
    stream.emplace(*tk);
    pieces.reserve(static_cast<size_t>(tk->n_vocab()));
    for (int32_t id = 0; id < tk->n_vocab(); ++id) pieces.push_back(tk->piece(id));
  }
  engine::StopMatcher stops(a.stops);
  std::string text;  // what was shown, up to a stop string
  std::string stop_reason = "length";
  auto show = [&](const std::string& t) {
    text += t;
    if (!a.json) std::cout << t << std::flush;
  };
  for (int64_t i = 0; i < n; ++i) {
    SamplerContext sctx{prompt, ids, pieces};
    auto tok = chain->sample(logits, sctx);
    if (!tok) return fail(tok.status().message());
    sampled.push_back(*tok);
    const int32_t next = force.empty() ? *tok : force[static_cast<size_t>(i)];
    // End-of-generation tokens (EOS, EOT) end the answer unless teacher forcing or --ignore-eos.
    if (force.empty() && !a.ignore_eos && tk && tk->is_end_of_generation(next)) {
      stop_reason = "eos";
      break;
    }
    chain->accept(next);
    ids.push_back(next);
    if (stream) {
      show(stops.push(stream->push(next)));
      if (stops.stopped()) {
        stop_reason = "stop";
        break;
      }
    } else if (!a.json) {
      std::cout << next << (i + 1 < n ? " " : "") << std::flush;
    }
    const engine::BatchToken bt{0, next, true};
    if (auto st = eng.decode({&bt, 1}, logits); !st) return fail(st.message());
    ++pos;
    if (lout) lout << json_text(logits_line(pos, logits)) << "\n";
  }
  const auto t2 = clock::now();
  if (stream && !stops.stopped()) show(stops.push(stream->flush()) + (stops.stopped() ? "" : stops.flush()));
  if (!a.json) std::cout << "\n" << std::flush;
  const double prompt_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double gen_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
  const auto& st = eng.stats();
  if (a.json) {
    nlohmann::ordered_json j;
    j["prompt_ids"] = prompt;
    j["ids"] = ids;
    if (tk) j["text"] = text;
    j["stop_reason"] = stop_reason;
    if (!force.empty()) j["sampled_ids"] = sampled;
    j["timings"] = {{"prompt_ms", prompt_ms},
                    {"prompt_tokens", prompt.size()},
                    {"prompt_tokens_per_s", prompt_ms > 0 ? 1000.0 * static_cast<double>(prompt.size()) / prompt_ms : 0.0},
                    {"generation_ms", gen_ms},
                    {"generated_tokens", ids.size()},
                    {"tokens_per_s", gen_ms > 0 ? 1000.0 * static_cast<double>(ids.size()) / gen_ms : 0.0}};
    j["stats"] = {{"fallback_nodes", st.fallback_nodes},
                  {"distinct_fallbacks", st.distinct_fallbacks},
                  {"converted_weights", (*rt)->model->weights().converted()},
                  {"transfers", st.transfers},
                  {"arena_bytes", st.arena_bytes}};
    if (a.routing_stats) j["routing"] = routing_json(engine::summarize_routing(eng.routing_counts()));
    std::cout << json_text(j) << "\n";
  } else {
    std::cerr << "prompt: " << prompt.size() << " tokens in " << prompt_ms << " ms ("
              << (prompt_ms > 0 ? 1000.0 * static_cast<double>(prompt.size()) / prompt_ms : 0.0) << " tokens/s); "
              << "generation: " << ids.size() << " tokens in " << gen_ms << " ms ("
              << (gen_ms > 0 ? 1000.0 * static_cast<double>(ids.size()) / gen_ms : 0.0) << " tokens/s)\n";
    if (st.fallback_nodes > 0)
      std::cerr << "fallbacks: " << st.fallback_nodes << " nodes ran off their preferred device\n";
    if (a.routing_stats) {
      const auto r = engine::summarize_routing(eng.routing_counts());
      std::cerr << "routing: " << r.layers.size() << " MoE layers; fewest experts chosen in a layer: "
                << r.fewest_experts_chosen << "/" << r.experts << "; busiest expert: " << r.worst_max_over_mean
                << "x the mean (layer " << r.worst_layer << ")\n";
    }
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Generate tokens for one prompt");
  cmd->add_option("-p,--pipeline", a->pipeline, "Pipeline YAML file");
  cmd->add_option("-m,--model", a->model, "Model file (replaces the pipeline's model.path)");
  cmd->add_option("--prompt", a->prompt, "Prompt text");
  cmd->add_option("--prompt-ids", a->prompt_ids, "Prompt as token ids: 1,2,3");
  cmd->add_option("-n,--n-predict", a->n, "Tokens to generate")->capture_default_str()->transform(integer_in(0, kMaxTokens));
  cmd->add_option("--seed", a->seed, "Seed for the dist sampler")->transform(integer_in(0, INT64_MAX));
  cmd->add_option("--set", a->sets, "Override a pipeline key, e.g. --set context.kv_type=q8_0 (repeatable)");
  cmd->add_flag("--json", a->json, "Print one JSON object: prompt_ids, ids, text, timings");
  cmd->add_option("--prompt-file", a->prompt_file, "Read the prompt text from this file");
  cmd->add_option("--stop", a->stops, "Stop when the output contains this text (repeatable; matched across tokens)");
  cmd->add_flag("--ignore-eos", a->ignore_eos, "Keep generating past end-of-generation tokens");
  cmd->add_flag("--chat", a->chat, "Wrap --prompt as one user message in the model's chat template");
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
