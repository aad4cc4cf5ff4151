#include "cli/llama_flags.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <iostream>
#include <sstream>

#include "cli/number_arg.hpp"
#include "pipeline/defaults.hpp"
#include "pipeline/load.hpp"
#include "planner/describe.hpp"
#include "registry/registry.hpp"
#include "util/parse_number.hpp"

namespace sy::cli {
namespace {

using pipeline::Diagnostic;
using pipeline::Location;
using pipeline::Node;

// One flag's value as the document would hold it, located at the flag.
Node scalar(const std::string& value, const Location& where, bool quoted = false) {
  Node n;
  n.kind = Node::Kind::scalar;
  n.scalar = value;
  n.quoted = quoted;
  n.loc = where;
  return n;
}

Location at(const std::string& flag, const std::string& value) {
  return {value.empty() ? flag : flag + " " + value, 0, 0};
}

// The mapping `key` of `map`, created (at `where`) when absent.
Node& child(Node& map, const std::string& key, const Location& where) {
  if (map.kind == Node::Kind::null) {
    map.kind = Node::Kind::map;
    map.loc = where;
  }
  if (Node* n = map.get(key)) return *n;
  Node empty;
  empty.loc = where;
  map.entries.push_back({key, where, std::move(empty)});
  return map.entries.back().value;
}

// Sets map[key] = value; false (with a diagnostic) when `map` is not a mapping.
bool set_key(Node& map, const std::string& path, const std::string& key, Node value, std::vector<Diagnostic>& diags) {
  if (map.kind == Node::Kind::null) {
    map.kind = Node::Kind::map;
    map.loc = value.loc;
  }
  if (map.kind != Node::Kind::map) {
    diags.push_back({value.loc, "'" + path + "' must be a mapping to set '" + key + "' in it, but the pipeline has " +
                                    map.describe(),
                     false});
    return false;
  }
  child(map, key, value.loc) = std::move(value);
  return true;
}

// The backends list, made explicit (the default is one cpu entry) so flags can edit it.
Node* backends_list(Node& root, const Location& where, std::vector<Diagnostic>& diags) {
  Node& b = child(root, "backends", where);
  if (b.kind == Node::Kind::null) b = pipeline::default_backends_node(where);
  if (b.kind != Node::Kind::list) {
    diags.push_back({where, "'backends' must be a list for this flag to edit it, but the pipeline has " + b.describe(),
                     false});
    return nullptr;
  }
  for (auto& item : b.items)
    if (item.kind == Node::Kind::scalar) (void)pipeline::expand_item(item, "backends", "backends");  // `- cpu`
  return &b;
}

// The plugin of a backends item, or the sampler of a sampling item.
std::string plugin_of(const Node& item) { return pipeline::item_name(item); }
std::string sampler_of(const Node& item) { return pipeline::item_name(item); }

bool is_terminal(const registry::Registry& reg, const std::string& name) {
  const auto* rec = reg.find(ComponentKind::sampler, name);
  return rec && reg.manifest(*rec).has_trait(kTraitTerminal);
}

bool has_param(const registry::Registry& reg, const std::string& name, const std::string& param) {
  const auto* rec = reg.find(ComponentKind::sampler, name);
  return rec && reg.manifest(*rec).param(param) != nullptr;
}

// The sampling list, made explicit (the default chain) so flags can tune it.
Node* sampling_list(Node& root, const Location& where, std::vector<Diagnostic>& diags) {
  Node& s = child(root, "sampling", where);
  if (s.kind == Node::Kind::null) s = pipeline::default_sampling_node(where);
  if (s.kind != Node::Kind::list) {
    diags.push_back({where, "'sampling' must be a list for this flag to tune it, but the pipeline has " + s.describe(),
                     false});
    return nullptr;
  }
  return &s;
}

// Sets `param` of one chain item to `value`, whatever form the item is written in:
// `- top_k`, `{ top_k: 40 }` (the main parameter) or `{ top_k: { k: 40 } }`.
void set_sampler_param(Node& item, const std::string& name, const std::string& param, const Node& value,
                       const registry::Registry& reg, std::vector<Diagnostic>& diags) {
  if (item.kind == Node::Kind::scalar) (void)pipeline::expand_item(item, "sampling", "sampling." + name);
  Node& v = item.entries.front().value;
  if (v.kind == Node::Kind::scalar) {
    const pipeline::PrimaryParam primary = [&](std::string_view s) { return pipeline::primary_param(reg, s); };
    if (primary(name) == param) {  // the shorthand stays a shorthand
      v = value;
      return;
    }
    if (auto st = pipeline::expand_primary(v, name, "sampling." + name, primary); !st) {
      diags.push_back({value.loc, st.message(), false});
      return;
    }
  }
  if (v.kind == Node::Kind::null) {
    v.kind = Node::Kind::map;
    v.loc = value.loc;
  }
  // Another kind is reported by validation, at the item.
  if (v.kind == Node::Kind::map) child(v, param, value.loc) = value;
}

// Sets `param` on every `name` in the chain, or inserts `{ name: { param: value } }` where
// llama.cpp's chain runs it.
void tune(Node& root, const std::string& name, const std::string& param, const std::string& flag,
          const std::string& text, const registry::Registry& reg, std::vector<Diagnostic>& diags) {
  const Location where = at(flag, text);
  Node* list = sampling_list(root, where, diags);
  if (!list) return;
  const Node value = scalar(text, where);
  bool found = false;
  for (auto& item : list->items)
    if (sampler_of(item) == name) {
      set_sampler_param(item, name, param, value, reg, diags);
      found = true;
    }
  if (found) return;
  const auto& order = canonical_sampler_order();
  const auto rank = [&](const std::string& s) {
    return static_cast<size_t>(std::find(order.begin(), order.end(), s) - order.begin());
  };
  auto pos = list->items.begin();
  for (; pos != list->items.end(); ++pos) {
    const std::string s = sampler_of(*pos);
    if (is_terminal(reg, s) || (rank(s) < order.size() && rank(s) > rank(name))) break;
  }
  Node item;
  item.kind = Node::Kind::map;
  item.loc = where;
  item.entries.push_back({name, where, Node{}});
  set_sampler_param(item, name, param, value, reg, diags);
  list->items.insert(pos, std::move(item));
}

// Every sampler that draws at random gets the seed.
void seed_all(Node& root, const std::string& text, const registry::Registry& reg, std::vector<Diagnostic>& diags) {
  const Location where = at("--seed", text);
  Node* list = sampling_list(root, where, diags);
  if (!list) return;
  bool any = false;
  for (auto& item : list->items) {
    const std::string s = sampler_of(item);
    if (!s.empty() && has_param(reg, s, "seed")) {
      set_sampler_param(item, s, "seed", scalar(text, where), reg, diags);
      any = true;
    }
  }
  if (!any)
    diags.push_back({where, "no sampler in the chain takes a seed (it picks tokens without chance, e.g. greedy); "
                            "drop --seed or end the chain with dist",
                     true});
}

// ---- placement and devices ----

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::vector<std::string> split_override_tensor(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int braces = 0;
  for (char c : text) {
    if (c == '{') ++braces;
    if (c == '}' && braces > 0) --braces;
    if (c == ',' && braces == 0) {
      out.push_back(cur);  // an empty rule is kept, for the caller to refuse
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty() || out.empty() || text.back() == ',') out.push_back(cur);
  for (auto& r : out) {
    const size_t eq = r.rfind('=');
    if (eq != std::string::npos) r = r.substr(0, eq + 1) + lower(r.substr(eq + 1));
  }
  return out;
}

namespace {

// -dev cuda0,vulkan1 keeps those GPU devices (adding their backends before the cpu) and
// drops the GPU backends it does not name; -dev none keeps the CPU only.
void select_devices(Node& root, const std::string& text, std::vector<Diagnostic>& diags) {
  const Location where = at("--device", text);
  Node* list = backends_list(root, where, diags);
  if (!list) return;
  std::vector<std::pair<std::string, int64_t>> wanted;
  if (lower(text) != "none") {
    std::string item;
    std::stringstream ss(text);
    while (std::getline(ss, item, ',')) {
      item = lower(item);
      size_t d = item.size();
      while (d > 0 && std::isdigit(static_cast<unsigned char>(item[d - 1]))) --d;
      if (d == 0 || d == item.size() || item.substr(0, d) == "cpu") {
        diags.push_back({where, "--device takes GPU devices with their index, such as cuda0 or vulkan1, separated by "
                                "commas, or none for the CPU only; got '" + item + "' (see --list-devices)",
                         false});
        return;
      }
      const auto index = util::parse_integer<int64_t>(item.substr(d), 0, 255);
      if (!index.ok()) {
        diags.push_back({where, "--device: '" + item + "' has no device index from 0 to 255 (see --list-devices)",
                         false});
        return;
      }
      wanted.emplace_back(item.substr(0, d), index.value);
    }
  }
  std::vector<Node> kept;
  for (auto& b : list->items) {
    const std::string plugin = plugin_of(b);
    const bool named = std::any_of(wanted.begin(), wanted.end(), [&](const auto& w) { return w.first == plugin; });
    if (plugin == "cpu" || named) kept.push_back(std::move(b));
  }
  for (const auto& [plugin, index] : wanted) {
    auto it = std::find_if(kept.begin(), kept.end(), [&, &plugin = plugin](const Node& b) { return plugin_of(b) == plugin; });
    if (it == kept.end()) {
      Node b;
      b.kind = Node::Kind::map;
      b.loc = where;
      b.entries.push_back({"plugin", where, scalar(plugin, where)});
      // GPUs first: the list is in preference order.
      auto cpu = std::find_if(kept.begin(), kept.end(), [](const Node& n) { return plugin_of(n) == "cpu"; });
      it = kept.insert(cpu, std::move(b));
    }
    Node& devs = child(*it, "devices", where);
    if (devs.loc.file != where.file) {  // replace what the pipeline listed
      devs = Node{};
      devs.kind = Node::Kind::list;
      devs.loc = where;
    }
    devs.kind = Node::Kind::list;
    devs.items.push_back(scalar(std::to_string(index), where));
  }
  list->items = std::move(kept);
}

}  // namespace

std::optional<std::string> kv_type_conflict(const std::string& k, const std::string& v) {
  if (k == v) return std::nullopt;
  return "the V cache is kept in the K cache's type, " + k + " here; give --cache-type-k " + v + " (-ctk) to store both as " +
         v;
}

std::optional<std::string> prompt_names_pipeline(const std::string& s) {
  auto ends = [&](const std::string& x) { return s.size() > x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0; };
  if (s.find_first_of(" \t\n") != std::string::npos || !(ends(".yaml") || ends(".yml"))) return std::nullopt;
  return "-p is the prompt, as in llama.cpp; the pipeline file is -P " + s + " (did you mean -P?)";
}

const std::vector<std::string>& canonical_sampler_order() {
  static const std::vector<std::string> order{"repetition_penalty", "presence_penalty", "frequency_penalty",
                                              "dry",                "top_k",            "typical_p",
                                              "top_p",              "min_p",            "xtc",
                                              "temperature"};
  return order;
}

void add_pipeline_flags(CLI::App& cmd, PipelineFlags& f, unsigned g) {
  if (g & kSourceFlags) {
    cmd.add_option("-P,--pipeline", f.pipeline, "Pipeline YAML file (flags below override its keys)");
    cmd.add_option("-m,--model", f.model, "Model file (model.path)");
    cmd.add_option("--set", f.sets, "Override any pipeline key, e.g. --set context.kv_type=q8_0 (repeatable)");
    cmd.add_flag("--print-pipeline", f.print_pipeline, "Print the pipeline after every override, as YAML, and exit");
  }
  if (g & kModelFlags) {
    cmd.add_flag("--no-mmap", f.no_mmap, "Read the weights instead of mapping them (model.mmap: false)");
    cmd.add_flag("--mlock", f.mlock, "Lock the mapped weights in RAM (model.mlock: true)");
  }
  if (g & kContextFlags) {
    cmd.add_option("-c,--ctx-size", f.ctx, "Context length per sequence (context.length); 0 = the model's trained length");
    cmd.add_option("-b,--batch-size", f.batch, "Tokens per engine step (context.batch)");
    cmd.add_option("--ubatch-size", f.ubatch, "Tokens per compute pass; -ub (context.ubatch)");
    cmd.add_option("--parallel", f.parallel, "Sequences decoded at once; -np (context.parallel)");
    cmd.add_option("--flash-attn", f.flash_attn, "on, off or auto; -fa alone means on (context.flash_attention)")
        ->expected(0, 1);
    cmd.add_option("--cache-type-k", f.cache_type_k, "KV cache type: f16, q8_0, ...; -ctk (context.kv_type)");
    cmd.add_option("--cache-type-v", f.cache_type_v, "Must equal -ctk: one type holds K and V; -ctv (context.kv_type)");
  }
  if (g & kBackendFlags) cmd.add_option("-t,--threads", f.threads, "CPU threads, -1 = auto (backends[cpu].threads)");
  if (g & (kBackendFlags | kDeviceFlags)) {
    cmd.add_option("--device", f.device,
                   "GPU devices to use, e.g. vulkan0 or cuda0,cuda1, or none; -dev (backends[].devices)");
    cmd.add_flag("--list-devices", f.list_devices, "List the devices of every installed backend and exit");
  }
  if (g & kPlacementFlags) {
    cmd.add_option("--n-gpu-layers", f.gpu_layers, "Layers on the GPU: N, all or auto; -ngl (placement.gpu_layers)");
    cmd.add_option("--n-cpu-moe", f.n_cpu_moe, "Routed experts of the first N layers in RAM (placement.cpu_moe)");
    cmd.add_flag("--cpu-moe", f.cpu_moe, "Every routed expert in RAM (placement.cpu_moe: all)");
    cmd.add_option("--override-tensor", f.override_tensor,
                   "PATTERN=DEVICE[,...], e.g. exps=CPU; -ot, repeatable (placement.overrides, before the file's)");
  }
  if (g & kSamplingFlags) {
    cmd.add_option("-s,--seed", f.seed, "Seed of the samplers that draw at random; -1 = random, printed")
        ->transform(seed_arg(INT64_MAX));
    cmd.add_option("--temp", f.temp, "Temperature (sampling: temperature)");
    cmd.add_option("--top-k", f.top_k, "Top-k, 0 = off (sampling: top_k)");
    cmd.add_option("--top-p", f.top_p, "Top-p (sampling: top_p)");
    cmd.add_option("--min-p", f.min_p, "Min-p (sampling: min_p)");
    cmd.add_option("--repeat-penalty", f.repeat_penalty, "Repetition penalty, 1 = off (sampling: repetition_penalty)");
    cmd.add_option("--repeat-last-n", f.repeat_last_n, "Tokens the penalties look back, -1 = all (last_n)");
    cmd.add_option("--presence-penalty", f.presence_penalty, "Presence penalty (sampling: presence_penalty)");
    cmd.add_option("--frequency-penalty", f.frequency_penalty, "Frequency penalty (sampling: frequency_penalty)");
  }
}

std::optional<uint64_t> resolve_random_seed(PipelineFlags& f) {
  if (!f.seed || *f.seed != "-1") return std::nullopt;
  // The samplers' seeds are signed 64-bit integers (dist's range in its manifest).
  const uint64_t s = random_seed() & 0x7fffffffffffffffull;
  f.seed = std::to_string(s);
  return s;
}

pipeline::TreeEdit flags_edit(const PipelineFlags& f) {
  return [f](Node& root, const registry::Registry& reg, std::vector<Diagnostic>& diags) {
    if (root.kind == Node::Kind::null) root.kind = Node::Kind::map;
    if (!f.model.empty()) {
      pipeline::expand_model_shorthand(root);
      const Location where = at("-m", f.model);
      set_key(child(root, "model", where), "model", "path", scalar(f.model, where, true), diags);
    }
    if (f.no_mmap || f.mlock) pipeline::expand_model_shorthand(root);
    if (f.no_mmap)
      set_key(child(root, "model", at("--no-mmap", "")), "model", "mmap", scalar("false", at("--no-mmap", "")), diags);
    if (f.mlock)
      set_key(child(root, "model", at("--mlock", "")), "model", "mlock", scalar("true", at("--mlock", "")), diags);

    auto context = [&](const std::string& flag, const std::optional<std::string>& v, const std::string& key) {
      if (!v) return;
      const Location where = at(flag, *v);
      set_key(child(root, "context", where), "context", key, scalar(*v, where), diags);
    };
    if (f.ctx != "0") context("--ctx-size", f.ctx, "length");  // -c 0: the model's, set after loading
    context("--batch-size", f.batch, "batch");
    context("--ubatch-size", f.ubatch, "ubatch");
    context("--parallel", f.parallel, "parallel");
    if (f.flash_attn) {
      const std::string v = lower(*f.flash_attn);
      const std::string mapped = v.empty() || v == "on" || v == "1" ? "true" : v == "off" || v == "0" ? "false" : v;
      context("--flash-attn", mapped, "flash_attention");
    }
    if (f.cache_type_k) context("--cache-type-k", lower(*f.cache_type_k), "kv_type");
    if (f.cache_type_v) {
      // One type holds K and V: -ctv must name the K type in effect (-ctk, the pipeline's, or f16).
      std::string k = "f16";
      if (const Node* c = root.get("context"); c && c->kind == Node::Kind::map)
        if (const Node* t = c->get("kv_type"); t && t->kind == Node::Kind::scalar) k = t->scalar;
      if (auto why = kv_type_conflict(k, lower(*f.cache_type_v)))
        diags.push_back({at("--cache-type-v", *f.cache_type_v), *why, false});
    }

    if (f.threads) {
      const Location where = at("--threads", *f.threads);
      if (Node* list = backends_list(root, where, diags)) {
        Node* cpu = nullptr;
        for (auto& b : list->items)
          if (plugin_of(b) == "cpu") cpu = &b;
        const std::string v = *f.threads == "-1" || *f.threads == "0" ? "auto" : *f.threads;
        if (cpu)
          set_key(*cpu, "backends[cpu]", "threads", scalar(v, where), diags);
        else
          diags.push_back({where, "--threads sets the cpu backend's threads, and the pipeline lists no cpu backend; "
                                  "add `- { plugin: cpu }` to its backends",
                           false});
      }
    }
    if (f.device) select_devices(root, *f.device, diags);

    auto placement = [&](const std::string& flag, const std::string& v, const std::string& key) {
      const Location where = at(flag, v);
      set_key(child(root, "placement", where), "placement", key, scalar(v, where), diags);
    };
    if (f.gpu_layers) placement("--n-gpu-layers", lower(*f.gpu_layers), "gpu_layers");
    if (f.n_cpu_moe && f.cpu_moe)
      diags.push_back({at("--cpu-moe", ""), "give --cpu-moe (every layer's experts in RAM) or --n-cpu-moe N, not both",
                       false});
    else if (f.n_cpu_moe)
      placement("--n-cpu-moe", lower(*f.n_cpu_moe), "cpu_moe");
    else if (f.cpu_moe)
      placement("--cpu-moe", "all", "cpu_moe");
    if (!f.override_tensor.empty()) {
      // Command-line rules go before the file's: the first matching rule wins.
      const Location where = at("--override-tensor", f.override_tensor.front());
      Node& pl = child(root, "placement", where);
      if (pl.kind == Node::Kind::null) pl.kind = Node::Kind::map;
      Node& ov = child(pl, "overrides", where);
      if (ov.kind == Node::Kind::null) {
        ov.kind = Node::Kind::list;
        ov.loc = where;
      }
      if (ov.kind != Node::Kind::list) {
        diags.push_back({where, "'placement.overrides' must be a list for -ot to add to it, but the pipeline has " +
                                    ov.describe(),
                         false});
      } else {
        std::vector<Node> rules;
        for (const auto& text : f.override_tensor)
          for (const auto& r : split_override_tensor(text)) rules.push_back(scalar(r, at("--override-tensor", text), true));
        ov.items.insert(ov.items.begin(), rules.begin(), rules.end());
      }
    }

    const std::pair<const std::optional<std::string>*, std::array<const char*, 3>> tuned[] = {
        {&f.repeat_penalty, {"repetition_penalty", "penalty", "--repeat-penalty"}},
        {&f.presence_penalty, {"presence_penalty", "penalty", "--presence-penalty"}},
        {&f.frequency_penalty, {"frequency_penalty", "penalty", "--frequency-penalty"}},
        {&f.top_k, {"top_k", "k", "--top-k"}},
        {&f.top_p, {"top_p", "p", "--top-p"}},
        {&f.min_p, {"min_p", "p", "--min-p"}},
        {&f.temp, {"temperature", "t", "--temp"}},
    };
    for (const auto& [value, names] : tuned)
      if (*value) tune(root, names[0], names[1], names[2], **value, reg, diags);
    if (f.repeat_last_n) {
      // llama.cpp's penalty_last_n is shared by its penalties: set it on each the chain has,
      // or on a repetition penalty (1.0, off) added for it.
      const char* penalties[] = {"repetition_penalty", "presence_penalty", "frequency_penalty"};
      std::vector<std::string> present;
      if (const Node* list = root.get("sampling"); list && list->kind == Node::Kind::list)
        for (const auto& item : list->items)
          for (const char* p : penalties)
            if (sampler_of(item) == p && std::find(present.begin(), present.end(), p) == present.end())
              present.emplace_back(p);
      if (present.empty()) present.emplace_back("repetition_penalty");
      for (const auto& p : present) tune(root, p, "last_n", "--repeat-last-n", *f.repeat_last_n, reg, diags);
    }
    if (f.seed) seed_all(root, *f.seed, reg, diags);
  };
}

std::optional<pipeline::Pipeline> load_with_flags(const std::string& command, PipelineFlags& f) {
  if (f.pipeline.empty() && f.model.empty()) {
    std::cerr << "switchyard " << command << ": give a model (-m FILE) or a pipeline (-P FILE)\n";
    return std::nullopt;
  }
  if (auto s = resolve_random_seed(f)) std::cerr << "seed: " << *s << " (random)\n";
  pipeline::LoadOptions opts;
  opts.sets = f.sets;
  opts.edit = flags_edit(f);
  // The built-in default is what `llama-cli -m` would run: the CPU and every default; -m
  // is set by the edit, which keeps a path that is not valid UTF-8 as it is.
  const auto lr = f.pipeline.empty()
                      ? pipeline::load_pipeline_from_text("backends: [ { plugin: cpu } ]\n", "built-in default", opts)
                      : pipeline::load_pipeline_file(f.pipeline, opts);
  for (const auto& d : lr.diagnostics) std::cerr << pipeline::format_diagnostic(d) << "\n";
  if (!lr.ok()) return std::nullopt;
  pipeline::Pipeline p = lr.pipeline;
  if (f.ctx == "0") {
    // llama.cpp's -c 0: the context the model was trained with, from its header.
    std::vector<std::string> warnings;
    registry::Registry reg(registry::default_search_path(p.plugin_path, warnings));
    auto m = planner::describe_file(reg, p.model.path);
    if (!m) {
      std::cerr << "switchyard " << command << ": " << m.status().message() << "\n";
      return std::nullopt;
    }
    if (m->hp.n_ctx_train <= 0) {
      std::cerr << "switchyard " << command << ": -c 0 asks for the context the model was trained with, and "
                << p.model.path.string() << " does not state one; give -c N\n";
      return std::nullopt;
    }
    p.context.length = m->hp.n_ctx_train;
    std::cerr << "context: " << p.context.length << " positions, the model's trained length (-c 0)\n";
  }
  return p;
}

PipelineFlags chunked_flags(const PipelineFlags& flags, int64_t n_ctx, int64_t batch, int64_t& eff_batch) {
  const int64_t n_seq = std::max<int64_t>(1, batch / n_ctx);
  eff_batch = std::min(batch, n_seq * n_ctx);
  PipelineFlags f = flags;
  f.ctx = std::to_string(n_ctx);
  f.parallel = std::to_string(n_seq);
  f.batch = std::to_string(eff_batch);
  // A batch under the default ubatch (512) brings the ubatch down with it, as in llama.cpp.
  if (!f.ubatch && eff_batch < 512) f.ubatch = std::to_string(eff_batch);
  return f;
}

Result<int64_t> token_count_flag(const std::optional<std::string>& v, const char* flag, int64_t fallback, int64_t lo) {
  if (!v) return fallback;
  const auto r = util::parse_integer<int64_t>(*v, lo, kMaxTokens);
  if (!r.ok())
    return error::invalid_argument(std::string(flag) + " " + *v + ": give a whole number of tokens, at least " +
                                   std::to_string(lo));
  return r.value;
}

}  // namespace sy::cli
