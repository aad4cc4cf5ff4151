#include "pipeline/validate.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <regex>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "convert/plan.hpp"
#include "pipeline/checker.hpp"
#include "pipeline/defaults.hpp"
#include "pipeline/load.hpp"
#include "registry/registry.hpp"
#include "util/parse_number.hpp"
#include "util/read_file.hpp"
#include "util/suggest.hpp"

namespace sy::pipeline {
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTop{"extends", "plugin_path", "strict", "model", "format", "backends",
                                    "placement", "context", "sampling", "server"};
const std::vector<std::string> kFormat{"convert_to", "fp8_activations"};
const std::vector<std::string> kModel{"path", "format", "tokenizer", "chat_template", "mmap", "mlock"};
const std::vector<std::string> kPlacement{"gpu_layers", "cpu_moe", "overrides", "headroom", "min_headroom"};
const std::vector<std::string> kContext{"length", "kv_type", "flash_attention", "batch", "ubatch", "parallel", "kv_tokens"};
const std::vector<std::string> kServer{"host",       "port",    "slots",    "batch_queue", "max_queue",
                                       "max_step_ms", "request_timeout", "api_key", "api_keys", "max_tokens",
                                       "max_body",   "cors_origins", "model_alias"};
const std::vector<std::string> kKvTypes{"f32", "f16", "bf16", "q8_0", "q4_0", "fp8"};

// Components that are part of Switchyard but may be left out of a build: naming one is a
// valid pipeline on a machine that lacks it, so validation warns instead of failing.
struct FirstParty {
  ComponentKind kind;
  const char* name;
  const char* how;
};
constexpr FirstParty kFirstParty[] = {
    {ComponentKind::backend, "cpu", "it is always built; check the installation"},
    {ComponentKind::backend, "cuda", "configure with -DSWITCHYARD_CUDA=ON on a machine with the CUDA toolkit"},
    {ComponentKind::backend, "vulkan", "configure with -DSWITCHYARD_VULKAN=ON with the Vulkan headers and glslc"},
    {ComponentKind::format, "gguf", "it is built with Switchyard; check the installation"},
    {ComponentKind::format, "awq", "it ships with the AWQ format plugin"},
    {ComponentKind::format, "gptq", "it ships with the GPTQ format plugin"},
    {ComponentKind::format, "fp8", "it ships with the FP8 format plugin"},
};

fs::path resolve(const std::string& p, const Location& loc) {
  fs::path path(p);
  if (path.is_relative() && loc.line > 0) return (fs::path(loc.file).parent_path() / path).lexically_normal();
  return path;
}

std::string idx(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

// The directories named by `plugin_path` (a path or a list), resolved against the file
// that wrote them; malformed entries are reported through `c`.
std::vector<fs::path> plugin_dirs_of(const Node& root, Checker& c, bool warn_missing = false) {
  std::vector<fs::path> out;
  const Node* n = root.get("plugin_path");
  if (!n || n->kind == Node::Kind::null) return out;
  auto add = [&](const Node& item, const std::string& path) {
    auto s = c.path_text(item, path);
    if (!s) return;
    out.push_back(resolve(*s, item.loc));
    std::error_code ec;
    // Only a warning: a plugin directory may be created after the pipeline is written.
    if (warn_missing && !fs::is_directory(out.back(), ec))
      c.warn(item.loc, "'" + path + "': directory '" + out.back().string() +
                           "' does not exist, so no plugins are read from it; fix the path or remove the entry");
  };
  if (n->kind == Node::Kind::scalar) {
    add(*n, "plugin_path");
  } else if (c.is_list(*n, "plugin_path", "[plugins/]")) {
    for (size_t i = 0; i < n->items.size(); ++i) add(n->items[i], idx("plugin_path", i));
  }
  return out;
}

// std::regex compiles recursively and expands counted repetitions into copies, so a long,
// deeply nested or heavily counted pattern costs stack and memory out of proportion to its
// text. Tensor-name patterns need none of that; these bounds refuse it before compiling.
constexpr size_t kMaxPatternLength = 1024;
constexpr int kMaxPatternNesting = 32;
constexpr uint64_t kMaxPatternCopies = 1000;

}  // namespace

std::optional<std::string> pattern_too_costly(const std::string& p) {
  if (p.size() > kMaxPatternLength)
    return "is " + std::to_string(p.size()) + " characters long; at most " + std::to_string(kMaxPatternLength) +
           " are allowed";
  int depth = 0;
  uint64_t copies = 1;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
    } else if (c == '(' && ++depth > kMaxPatternNesting) {
      return "nests groups more than " + std::to_string(kMaxPatternNesting) + " deep";
    } else if (c == ')') {
      --depth;
    } else if (c == '{') {
      // {n}, {n,} or {n,m}: the compiled pattern holds up to max(n, m) copies of the atom.
      uint64_t most = 0, cur = 0;
      size_t j = i + 1;
      for (; j < p.size() && (std::isdigit(static_cast<unsigned char>(p[j])) || p[j] == ','); ++j) {
        cur = p[j] == ',' ? 0 : std::min<uint64_t>(cur * 10 + static_cast<uint64_t>(p[j] - '0'), kMaxPatternCopies + 1);
        most = std::max(most, cur);
      }
      if (j < p.size() && p[j] == '}' && j > i + 1) {
        copies *= std::max<uint64_t>(most, 1);
        if (copies > kMaxPatternCopies)
          return "repeats with counts ({n,m}) that multiply to more than " + std::to_string(kMaxPatternCopies) +
                 "; use + or * instead";
      }
    }
  }
  return std::nullopt;
}

namespace {

class Validator {
 public:
  Validator(const registry::Registry& reg, std::vector<Diagnostic>& diags, const ValidateOptions& opts)
      : reg_(reg), c_(diags), opts_(opts) {}

  Pipeline run(const Node& root) {
    Pipeline p;
    p.source = root.loc.file;
    c_.track(&p.locations);
    fill(root, p);
    c_.track(nullptr);
    return p;
  }

 private:
  void fill(const Node& root, Pipeline& p) {
    if (root.kind == Node::Kind::null) {
      c_.error(root.loc, "the pipeline is empty; it needs at least a 'model' section");
      return;
    }
    if (!c_.is_map(root, "pipeline")) return;
    c_.check_keys(root, "", kTop);
    if (const Node* n = root.get("strict"))
      if (auto b = c_.boolean(*n, "strict")) p.strict = *b;
    p.plugin_path = plugin_dirs_of(root, c_, true);
    if (const Node* n = root.get("model"))
      model(*n, p.model);
    else
      c_.error(root.loc, "missing required section 'model' (e.g. model: { path: models/my-model.gguf })");
    if (const Node* n = root.get("format")) format(*n, p.format);
    backends(root.get("backends"), root.loc, p.backends);
    if (const Node* n = root.get("placement")) placement(*n, p.placement, p.backends);
    if (const Node* n = root.get("context")) context(*n, p.context);
    sampling(root.get("sampling"), root.loc, p.sampling);
    if (const Node* n = root.get("server")) server(*n, p.server);
  }

  // A component name: known (return its manifest), first-party but not built (warn,
  // nullptr), or unknown (error with suggestion, nullptr).
  const registry::ComponentManifest* component(ComponentKind kind, const Node& n, const std::string& path) {
    auto name = c_.string(n, path);
    if (!name) return nullptr;
    const std::string kname(component_kind_name(kind));
    if (const auto* rec = reg_.find(kind, *name)) {
      if (!rec->available)
        c_.warn(n.loc, "'" + path + "': " + kname + " '" + *name + "' is installed but unavailable here: " +
                           rec->unavailable_reason);
      return &reg_.manifest(*rec);
    }
    for (const auto& fp : kFirstParty)
      if (fp.kind == kind && *name == fp.name) {
        c_.warn(n.loc, "'" + path + "': " + kname + " '" + *name + "' is not built in this installation (" + fp.how +
                           "); its parameters were not checked");
        return nullptr;
      }
    const auto names = reg_.names(kind);
    std::string msg = "'" + path + "': no " + kname + " named '" + *name + "'";
    if (auto s = closest(*name, names)) msg += "; did you mean '" + *s + "'?";
    std::string list;
    for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
    msg += list.empty() ? " (no " + kname + " plugins are installed)" : " (installed: " + list + ")";
    c_.error(n.loc, msg);
    return nullptr;
  }

  // Fills `out` from the entries of `map` that are not core keys, checked against the schema.
  void params(const registry::ComponentManifest& m, const Node* map, const std::string& path,
              const std::vector<std::string>& core, ParamMap& out) {
    std::vector<std::string> allowed = core;
    for (const auto& p : m.params) allowed.push_back(p.name);
    if (map) c_.check_keys(*map, path, allowed);
    for (const auto& spec : m.params) {
      const Node* v = map ? map->get(spec.name) : nullptr;
      if (v && v->kind != Node::Kind::null) {
        if (auto val = c_.param(spec, *v, path + "." + spec.name)) out.set(spec.name, *val);
      } else if (spec.def) {
        out.set(spec.name, *spec.def);
      } else if (!spec.optional) {
        c_.error(map ? map->loc : Location{}, "missing required parameter '" + spec.name + "' in '" + path + "'");
      }
    }
  }

  void model(const Node& n, ModelConfig& m) {
    if (n.kind != Node::Kind::map) {  // shorthand: model: path/to/file.gguf
      if (auto s = c_.path_text(n, "model", "a path or a mapping like { path: ... }")) {
        c_.seen("model.path", n.loc);
        model_path(n, *s, "model", m);
      }
      return;
    }
    c_.check_keys(n, "model", kModel);
    c_.require(n, "model", "path");
    if (const Node* v = n.get("path"))
      if (auto s = c_.path_text(*v, "model.path")) model_path(*v, *s, "model.path", m);
    if (const Node* v = n.get("format"))
      if (component(ComponentKind::format, *v, "model.format")) m.format = v->scalar;
    if (const Node* v = n.get("tokenizer"))
      if (auto s = c_.path_text(*v, "model.tokenizer")) {
        m.tokenizer = resolve(*s, v->loc);
        input_file(*v, "model.tokenizer", m.tokenizer, "a tokenizer.json");
      }
    if (const Node* v = n.get("chat_template"))
      if (auto s = c_.path_text(*v, "model.chat_template")) {
        m.chat_template = resolve(*s, v->loc);
        input_file(*v, "model.chat_template", m.chat_template, "a Jinja template file");
      }
    if (const Node* v = n.get("mmap"))
      if (auto b = c_.boolean(*v, "model.mmap")) m.mmap = *b;
    if (const Node* v = n.get("mlock"))
      if (auto b = c_.boolean(*v, "model.mlock")) m.mlock = *b;
  }

  void format(const Node& n, FormatConfig& f) {
    if (n.kind == Node::Kind::null) return;
    if (!c_.is_map(n, "format", "{ convert_to: q8_0 }")) return;
    c_.check_keys(n, "format", kFormat);
    if (const Node* v = n.get("convert_to"))
      if (auto x = c_.choice(*v, "format.convert_to", convert::convert_to_choices())) f.convert_to = *x;
    if (const Node* v = n.get("fp8_activations"))
      if (auto x = c_.choice(*v, "format.fp8_activations", {"weight_only", "static"})) f.fp8_activations = *x;
  }

  void model_path(const Node& v, const std::string& text, const std::string& path, ModelConfig& m) {
    if (text.empty()) {
      c_.error(v.loc, "'" + path + "' must not be empty");
      return;
    }
    m.path = resolve(text, v.loc);
    if (!opts_.model_file) return;
    std::error_code ec;
    // A directory holds a model in several files (safetensors shards and their config).
    if (fs::is_directory(m.path, ec)) {
      if (::access(m.path.c_str(), R_OK | X_OK) != 0)
        c_.error(v.loc, "'" + path + "': cannot read the model directory '" + m.path.string() + "': " +
                            std::strerror(errno) + "; fix its permissions");
      return;
    }
    input_file(v, path, m.path, "the model file or directory");
  }

  // A file the pipeline names must exist and be readable now, not when `run` opens it.
  void input_file(const Node& v, const std::string& path, const fs::path& file, const std::string& what) {
    std::error_code ec;
    if (fs::is_directory(file, ec)) {
      c_.error(v.loc, "'" + path + "': file '" + file.string() + "' is a directory; give the path of " + what + " inside it");
      return;
    }
    const Status st = util::check_input_file(file, "file");
    if (st) return;
    const std::string fix =
        st.code() == StatusCode::not_found
            ? "give the path of " + what +
                  (v.loc.line > 0 ? " (a relative path is read from the directory of the file that names it)" : "")
            : "fix its permissions";
    c_.error(v.loc, "'" + path + "': " + st.message() + "; " + fix);
  }

  void backends(const Node* n, const Location& root_loc, std::vector<BackendConfig>& out) {
    if (!n || n->kind == Node::Kind::null) {
      // Default: the CPU backend with its defaults.
      if (const auto* rec = reg_.find(ComponentKind::backend, "cpu")) {
        BackendConfig b{"cpu", {}, {}, root_loc};
        params(reg_.manifest(*rec), nullptr, "backends[0]", {"plugin", "devices"}, b.params);
        out.push_back(std::move(b));
      }
      return;
    }
    if (!c_.is_list(*n, "backends", "[ { plugin: cpu } ]")) return;
    if (n->items.empty()) c_.error(n->loc, "'backends' must list at least one backend, e.g. [ { plugin: cpu } ]");
    for (size_t i = 0; i < n->items.size(); ++i) {
      const Node& e = n->items[i];
      const std::string path = idx("backends", i);
      if (e.kind == Node::Kind::scalar) {  // shorthand: - cpu
        Node map;
        map.kind = Node::Kind::map;
        map.loc = e.loc;
        map.entries.push_back({"plugin", e.loc, e});
        backend(map, path, out);
      } else if (c_.is_map(e, path, "{ plugin: cpu }")) {
        backend(e, path, out);
      }
    }
  }

  void backend(const Node& e, const std::string& path, std::vector<BackendConfig>& out) {
    BackendConfig b;
    b.loc = e.loc;
    const Node* plugin = e.get("plugin");
    if (!plugin) {
      c_.require(e, path, "plugin");
      return;
    }
    const auto* m = component(ComponentKind::backend, *plugin, path + ".plugin");
    b.plugin = plugin->scalar;
    for (const auto& prev : out)
      if (prev.plugin == b.plugin) {
        c_.error(plugin->loc, "'" + path + ".plugin': backend '" + b.plugin + "' is listed twice (first at line " +
                                  std::to_string(prev.loc.line) + "); list its devices in one entry");
        return;
      }
    if (const Node* d = e.get("devices")) {
      std::string kw;
      if (d->kind == Node::Kind::scalar && d->scalar == "all") {
        // all devices: the empty list
      } else if (d->kind == Node::Kind::scalar) {
        if (auto v = c_.integer(*d, path + ".devices", 0, 255, {"all"}, &kw)) b.devices.push_back(*v);
      } else if (c_.is_list(*d, path + ".devices", "[0, 1]")) {
        for (size_t j = 0; j < d->items.size(); ++j)
          if (auto v = c_.integer(d->items[j], idx(path + ".devices", j), 0, 255)) b.devices.push_back(*v);
      }
    }
    if (m)
      params(*m, &e, path, {"plugin", "devices"}, b.params);
    out.push_back(std::move(b));
  }

  std::optional<MemoryAmount> amount(const Node& n, const std::string& path) {
    if (n.kind == Node::Kind::scalar)
      if (auto a = parse_amount(n.scalar)) return a;
    c_.error(n.loc, "'" + path + "' must be a percentage below 100% like '10%' or a size below 16 EiB like '2GiB', got " +
                        n.describe());
    return std::nullopt;
  }

  LayerCount layers(const Node& n, const std::string& path, const std::vector<std::string>& keywords) {
    std::string kw;
    LayerCount lc{LayerCount::Mode::count, 0};
    if (auto v = c_.integer(n, path, 0, 100000, keywords, &kw)) {
      if (kw == "all") lc.mode = LayerCount::Mode::all;
      else if (kw == "auto") lc.mode = LayerCount::Mode::automatic;
      else lc.n = *v;
    }
    return lc;
  }

  void placement(const Node& n, PlacementConfig& p, const std::vector<BackendConfig>& backends) {
    if (n.kind == Node::Kind::null) return;
    if (!c_.is_map(n, "placement", "{ gpu_layers: all }")) return;
    c_.check_keys(n, "placement", kPlacement);
    if (const Node* v = n.get("gpu_layers")) p.gpu_layers = layers(*v, "placement.gpu_layers", {"all", "auto"});
    if (const Node* v = n.get("cpu_moe")) p.cpu_moe = layers(*v, "placement.cpu_moe", {"all"});
    if (const Node* v = n.get("headroom"))
      if (auto a = amount(*v, "placement.headroom")) p.headroom = *a;
    if (const Node* v = n.get("min_headroom"))
      if (auto a = amount(*v, "placement.min_headroom")) p.min_headroom = *a;
    if (const Node* v = n.get("overrides")) {
      if (!c_.is_list(*v, "placement.overrides", "[\"blk\\\\.[0-9]+\\\\.ffn_.*_exps=cpu\"]")) return;
      for (size_t i = 0; i < v->items.size(); ++i)
        override_rule(v->items[i], idx("placement.overrides", i), p, backends);
    }
  }

  void override_rule(const Node& n, const std::string& path, PlacementConfig& p,
                     const std::vector<BackendConfig>& backends) {
    auto s = c_.string(n, path);
    if (!s) return;
    const size_t eq = s->rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s->size()) {
      c_.error(n.loc, "'" + path + "' must be 'REGEX=DEVICE' (e.g. 'blk\\.1[0-9]\\.ffn_.*_exps=cpu'), got '" + *s + "'");
      return;
    }
    OverrideRule r{s->substr(0, eq), s->substr(eq + 1), n.loc};
    if (auto why = pattern_too_costly(r.pattern)) {
      c_.error(n.loc, "'" + path + "': the regular expression " + *why);
      return;
    }
    try {
      std::regex re(r.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      c_.error(n.loc, "'" + path + "': invalid regular expression '" + r.pattern + "': " + e.what());
      return;
    }
    static const std::regex kDevice("^(cpu|[a-z][a-z0-9_]*[0-9]+)$");
    if (!std::regex_match(r.device, kDevice)) {
      c_.error(n.loc, "'" + path + "': device '" + r.device +
                          "' must be 'cpu' or a backend device with its index, like 'cuda0' or 'vulkan1'");
      return;
    }
    if (!device_listed(n, path, r.device, backends)) return;
    p.overrides.push_back(std::move(r));
  }

  // A device is its backend's name and an index ("cuda1"); the backend must be listed and,
  // when its entry names devices, the index among them. With every device of the backend
  // the index is checked when the backend starts, since only it knows how many there are.
  bool device_listed(const Node& n, const std::string& path, const std::string& device,
                     const std::vector<BackendConfig>& backends) {
    if (device == "cpu") return true;
    const size_t digits = device.find_last_not_of("0123456789") + 1;
    const std::string plugin = device.substr(0, digits);
    const std::string index_text = device.substr(digits);
    const auto parsed = util::parse_integer<int64_t>(index_text);
    const int64_t index = parsed.ok() ? parsed.value : -1;  // too long for any device list
    // gpuN is the N-th GPU of whichever GPU backends start (counted when they do), so a
    // pipeline written on a CUDA machine runs unchanged on a Vulkan one.
    if (plugin == "gpu") {
      if (std::any_of(backends.begin(), backends.end(), [](const BackendConfig& b) { return b.plugin != "cpu"; }))
        return true;
      c_.error(n.loc, "'" + path + "': device '" + device +
                          "' is a GPU, but 'backends' lists none; add { plugin: vulkan } or { plugin: cuda } to "
                          "'backends' or send these tensors to cpu");
      return false;
    }
    const BackendConfig* entry = nullptr;
    for (const auto& b : backends)
      if (b.plugin == plugin) entry = &b;
    if (!entry) {
      c_.error(n.loc, "'" + path + "': device '" + device + "' belongs to backend '" + plugin +
                          "', which 'backends' does not list; add { plugin: " + plugin +
                          " } to 'backends' or send these tensors to a listed device");
      return false;
    }
    if (entry->devices.empty() ||
        std::find(entry->devices.begin(), entry->devices.end(), index) != entry->devices.end())
      return true;
    std::string listed;
    for (const auto d : entry->devices) listed += (listed.empty() ? "" : ", ") + std::to_string(d);
    c_.error(n.loc, "'" + path + "': " + device + " is not among the devices the " + plugin + " entry lists ([" +
                        listed + "]); add " + index_text + " to its devices or use one of them");
    return false;
  }

  void context(const Node& n, ContextConfig& c) {
    if (n.kind == Node::Kind::null) return;
    if (!c_.is_map(n, "context", "{ length: 8192 }")) return;
    c_.check_keys(n, "context", kContext);
    if (const Node* v = n.get("length"))
      if (auto x = c_.integer(*v, "context.length", 16, 2147483647)) c.length = *x;
    if (const Node* v = n.get("kv_type"))
      if (auto x = c_.choice(*v, "context.kv_type", kKvTypes)) c.kv_type = *x;
    if (const Node* v = n.get("flash_attention")) {
      if (v->kind == Node::Kind::scalar && v->scalar == "auto") {
        c.flash_attention = "auto";
      } else if (v->kind == Node::Kind::scalar && (v->scalar == "true" || v->scalar == "false")) {
        c.flash_attention = v->scalar;
      } else {
        c_.error(v->loc, "'context.flash_attention' must be true, false or 'auto', got " + v->describe());
      }
    }
    const Node* vb = n.get("batch");
    const Node* vu = n.get("ubatch");
    if (vb)
      if (auto x = c_.integer(*vb, "context.batch", 1, 1 << 20)) c.batch = *x;
    if (vu)
      if (auto x = c_.integer(*vu, "context.ubatch", 1, 1 << 20)) c.ubatch = *x;
    if (c.ubatch > c.batch)
      c_.error(vu ? vu->loc : vb->loc, "'context.ubatch' (" + std::to_string(c.ubatch) +
                                           ") must not exceed 'context.batch' (" + std::to_string(c.batch) + ")");
    if (const Node* v = n.get("parallel"))
      if (auto x = c_.integer(*v, "context.parallel", 1, 4096)) c.parallel = *x;
    if (const Node* v = n.get("kv_tokens")) {
      if (auto x = c_.integer(*v, "context.kv_tokens", 0, 2147483647)) c.kv_tokens = *x;
      if (c.kv_tokens > 0 && c.kv_tokens < c.length)
        c_.error(v->loc, "'context.kv_tokens' (" + std::to_string(c.kv_tokens) +
                             ") must hold at least one sequence of 'context.length' (" + std::to_string(c.length) +
                             ") positions; raise it or use 0 (length x parallel)");
    }
  }

  void sampling(const Node* n, const Location& root_loc, std::vector<ComponentConfig>& out) {
    Node defaults;
    if (!n || n->kind == Node::Kind::null) {
      // The default chain is checked as if the document had written it.
      std::string names;
      for (const auto& d : default_sampling_chain()) names += (names.empty() ? "" : ", ") + d.name;
      for (const auto& d : default_sampling_chain())
        if (!reg_.find(ComponentKind::sampler, d.name)) {
          c_.error(root_loc, "the default sampling chain (" + names + ") needs sampler '" + d.name +
                                 "', which is not installed; install the samplers plugin or write a 'sampling' chain "
                                 "of installed samplers");
          return;
        }
      defaults = default_sampling_node(root_loc);
      n = &defaults;
    }
    if (!c_.is_list(*n, "sampling", "[ { top_p: 0.95 }, { temperature: 0.7 }, dist ]")) return;
    if (n->items.empty()) {
      c_.error(n->loc, "'sampling' is empty, so no token would ever be picked; list at least one sampler, e.g. [ greedy ]");
      return;
    }
    std::vector<const registry::ComponentManifest*> chain;
    for (size_t i = 0; i < n->items.size(); ++i) chain.push_back(sampler(n->items[i], idx("sampling", i), out));
    terminal_at_end(*n, chain);
  }

  // The chain stops at the first sampler that picks the token (`run` refuses a chain where
  // none does), so exactly one must pick it, last. Samplers that did not resolve (already
  // reported) are skipped: nothing is known about them.
  void terminal_at_end(const Node& list, const std::vector<const registry::ComponentManifest*>& chain) {
    bool unknown = false;
    for (size_t i = 0; i < chain.size(); ++i) {
      if (!chain[i]) {
        unknown = true;
        continue;
      }
      if (!chain[i]->has_trait(kTraitTerminal) || i + 1 == chain.size()) continue;
      const size_t j = i + 1;
      const std::string later = chain[j] ? chain[j]->name : list.items[j].kind == Node::Kind::scalar
                                                                  ? list.items[j].scalar
                                                                  : "the next sampler";
      const bool both = chain[j] && chain[j]->has_trait(kTraitTerminal);
      c_.error(list.items[j].loc, "'" + idx("sampling", j) + "': " + chain[i]->name + " (" + idx("sampling", i) +
                                      ") already picks the token, so " + later + " would never run; " +
                                      (both ? "keep one of them at the end"
                                            : "move " + later + " before " + chain[i]->name + " or remove it"));
      return;
    }
    if (unknown || chain.back()->has_trait(kTraitTerminal)) return;
    std::vector<std::string> terminals;
    for (const auto& name : reg_.names(ComponentKind::sampler))
      if (const auto* rec = reg_.find(ComponentKind::sampler, name))
        if (reg_.manifest(*rec).has_trait(kTraitTerminal)) terminals.push_back(name);
    std::string fix;
    for (size_t i = 0; i < terminals.size(); ++i)
      fix += (i == 0 ? "" : i + 1 == terminals.size() ? " or " : ", ") + terminals[i];
    c_.error(list.loc, "'sampling' has no sampler that picks the token (" + chain.back()->name +
                           " only reshapes the candidates), so `run` would refuse it; end it with " +
                           (fix.empty() ? "a sampler that picks the token" : fix));
  }

  // Adds the sampler to `out`; returns its manifest, nullptr when it did not resolve.
  const registry::ComponentManifest* sampler(const Node& e, const std::string& path, std::vector<ComponentConfig>& out) {
    ComponentConfig cc;
    cc.loc = e.loc;
    if (e.kind == Node::Kind::scalar) {
      cc.name = e.scalar;
      cc.builtin = e.builtin;
      const auto* m = component(ComponentKind::sampler, e, path);
      if (m) params(*m, nullptr, path + "." + cc.name, {}, cc.params);
      out.push_back(std::move(cc));
      return m;
    }
    if (e.kind != Node::Kind::map || e.entries.size() != 1) {
      c_.error(e.loc, "'" + path + "' must be a sampler name or a one-key mapping such as { top_p: 0.95 }, got " +
                          (e.kind == Node::Kind::map ? std::to_string(e.entries.size()) + " keys" : e.describe()));
      return nullptr;
    }
    const auto& entry = e.entries.front();
    cc.name = entry.key;
    Node name_node;
    name_node.kind = Node::Kind::scalar;
    name_node.scalar = entry.key;
    name_node.loc = entry.key_loc;
    const auto* m = component(ComponentKind::sampler, name_node, path);
    c_.seen(path, e.loc);
    if (!m) return nullptr;
    const std::string ppath = path + "." + cc.name;
    const Node& v = entry.value;
    if (v.kind == Node::Kind::map || v.kind == Node::Kind::null) {
      params(*m, v.kind == Node::Kind::map ? &v : nullptr, ppath, {}, cc.params);
      cc.builtin = v.kind == Node::Kind::map && !v.entries.empty() &&
                   std::all_of(v.entries.begin(), v.entries.end(), [](const auto& x) { return x.value.builtin; });
    } else {
      const ParamSpec* primary = nullptr;
      for (const auto& p : m->params)
        if (p.primary) primary = &p;
      if (!primary) {
        c_.error(v.loc, "'" + ppath + "': sampler '" + cc.name + "' takes no shorthand value; write '" + cc.name +
                            "' alone or give its parameters as a mapping");
        return m;
      }
      params(*m, nullptr, ppath, {}, cc.params);
      if (auto val = c_.param(*primary, v, ppath)) cc.params.set(primary->name, *val);
      cc.builtin = v.builtin;
    }
    out.push_back(std::move(cc));
    return m;
  }

  void server(const Node& n, ServerConfig& s) {
    if (n.kind == Node::Kind::null) return;
    if (!c_.is_map(n, "server", "{ port: 8080 }")) return;
    c_.check_keys(n, "server", kServer);
    if (const Node* v = n.get("host"))
      if (auto x = c_.string(*v, "server.host")) s.host = *x;
    if (const Node* v = n.get("port"))
      if (auto x = c_.integer(*v, "server.port", 1, 65535)) s.port = *x;
    if (const Node* v = n.get("slots"))
      if (auto x = c_.integer(*v, "server.slots", 1, 4096)) s.slots = *x;
    if (const Node* v = n.get("batch_queue"))
      if (auto x = c_.boolean(*v, "server.batch_queue")) s.batch_queue = *x;
    if (const Node* v = n.get("max_queue"))
      if (auto x = c_.integer(*v, "server.max_queue", 0, 1000000)) s.max_queue = *x;
    if (const Node* v = n.get("max_step_ms"))
      if (auto x = c_.integer(*v, "server.max_step_ms", 0, 600000)) s.max_step_ms = *x;
    if (const Node* v = n.get("request_timeout"))
      if (auto x = c_.integer(*v, "server.request_timeout", 1, 604800)) s.request_timeout = *x;
    if (const Node* v = n.get("api_key"))
      if (auto x = c_.string(*v, "server.api_key")) s.api_key = *x;
    strings(n.get("api_keys"), "server.api_keys", "[\"sk-...\"]", s.api_keys);
    if (const Node* v = n.get("max_tokens"))
      if (auto x = c_.integer(*v, "server.max_tokens", 0, 2147483647)) s.max_tokens = *x;
    if (const Node* v = n.get("max_body"))
      if (auto x = c_.integer(*v, "server.max_body", 1024, 1 << 30)) s.max_body = *x;
    strings(n.get("cors_origins"), "server.cors_origins", "[\"http://localhost:3000\"]", s.cors_origins);
    if (const Node* v = n.get("model_alias"))
      if (auto x = c_.string(*v, "server.model_alias")) s.model_alias = *x;
  }

  void strings(const Node* v, const std::string& path, const std::string& example, std::vector<std::string>& out) {
    if (!v || v->kind == Node::Kind::null) return;
    if (!c_.is_list(*v, path, example)) return;
    for (size_t i = 0; i < v->items.size(); ++i)
      if (auto x = c_.string(v->items[i], idx(path, i))) out.push_back(*x);
  }

  const registry::Registry& reg_;
  Checker c_;
  ValidateOptions opts_;
};

}  // namespace

const std::vector<std::string>& top_level_keys() { return kTop; }

std::optional<MemoryAmount> parse_amount(std::string_view text) {
  if (text.empty() || text.back() != '%') {
    const auto b = parse_size(text);
    return b ? std::optional<MemoryAmount>(MemoryAmount{0, *b}) : std::nullopt;
  }
  const auto v = util::parse_finite(text.substr(0, text.size() - 1));
  if (v.ok() && v.value >= 0 && v.value < 100) return MemoryAmount{v.value / 100, 0};
  return std::nullopt;
}

std::optional<uint64_t> parse_size(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  const auto v = util::parse_finite(text.substr(0, i));
  if (!v.ok()) return std::nullopt;
  std::string unit(text.substr(i));
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  double mult = 0;
  const std::pair<const char*, double> units[] = {
      {"", 1}, {"b", 1}, {"k", 1024}, {"kb", 1e3}, {"kib", 1024}, {"m", 1048576}, {"mb", 1e6},
      {"mib", 1048576}, {"g", 1073741824.0}, {"gb", 1e9}, {"gib", 1073741824.0}, {"t", 1099511627776.0},
      {"tb", 1e12}, {"tib", 1099511627776.0}};
  for (const auto& [u, m] : units)
    if (unit == u) mult = m;
  if (mult == 0) return std::nullopt;
  // Sizes past 2^64 bytes have no uint64_t value; converting one would be undefined.
  return util::to_integer<uint64_t>(std::round(v.value * mult));
}

std::vector<fs::path> plugin_dirs(const Node& root, std::vector<Diagnostic>& diags) {
  if (root.kind != Node::Kind::map) return {};
  Checker c(diags);
  return plugin_dirs_of(root, c);
}

Pipeline validate(const Node& root, const registry::Registry& reg, std::vector<Diagnostic>& diags,
                  const ValidateOptions& opts) {
  const size_t first = diags.size();
  Validator v(reg, diags, opts);
  Pipeline p = v.run(root);
  // Report in document order (per file), whatever order the sections were checked in.
  std::stable_sort(diags.begin() + static_cast<std::ptrdiff_t>(first), diags.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.loc.file, a.loc.line, a.loc.column) <
                            std::tie(b.loc.file, b.loc.line, b.loc.column);
                   });
  return p;
}

// The loaders live in load.cpp; these keep the short forms the commands and tests use.
LoadResult load_pipeline(const fs::path& file, const std::vector<std::string>& overrides,
                         const std::vector<fs::path>* fixed_search_dirs, const ValidateOptions& opts) {
  LoadOptions o;
  o.sets = overrides;
  o.fixed_search_dirs = fixed_search_dirs;
  o.validate = opts;
  return load_pipeline_file(file, o);
}

LoadResult load_pipeline(const fs::path& file, const std::vector<std::string>& overrides) {
  return load_pipeline(file, overrides, nullptr);
}

}  // namespace sy::pipeline
