// Topology files ("tensorfs-topology-v2": Hugging Face tensor names and shapes). The file
// is untrusted input: every value is type- and range-checked before it is used, and every
// refusal names the file and what was wrong, so nothing in it can throw or overflow.
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "synth/topology.hpp"
#include "util/parse_number.hpp"
#include "util/read_file.hpp"

namespace sy::synth {
namespace {

using json = nlohmann::json;
using Shapes = std::map<std::string, std::vector<int64_t>>;

// Real shapes files are a few MiB (one line per tensor of a 35B MoE).
constexpr uint64_t kMaxTopologyFileBytes = uint64_t{64} << 20;
// No single tensor dimension is larger than a vocabulary.
constexpr int64_t kMaxDim = kMaxTopologyVocab;

struct ShapeReader {
  const Shapes& s;
  std::string prefix;
  const std::vector<int64_t>* get(const std::string& name) const {
    auto it = s.find(prefix + name);
    return it == s.end() ? nullptr : &it->second;
  }
  int64_t dim(const std::string& name, size_t i) const {
    const auto* v = get(name);
    return v && i < v->size() ? (*v)[i] : 0;
  }
};

Status bad_file(const std::filesystem::path& path, const std::string& why) {
  return error::invalid_argument(path.string() + ": " + why);
}

// An integer held by a JSON value within [lo, hi], whatever JSON number kind it is.
std::optional<int64_t> json_integer(const json& v, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return std::nullopt;
    const auto s = static_cast<int64_t>(u);
    return s < lo ? std::nullopt : std::optional<int64_t>(s);
  }
  if (v.is_number_integer()) {
    const int64_t s = v.get<int64_t>();
    return s < lo || s > hi ? std::nullopt : std::optional<int64_t>(s);
  }
  return std::nullopt;
}

// The optional "config" object (config.json keys): each read checks the type and range
// and falls back to the architecture's default when the key is absent.
class Config {
 public:
  Config(const json& cfg, const std::filesystem::path& path) : cfg_(cfg), path_(path) {}

  [[nodiscard]] bool has(const char* key) const { return cfg_.contains(key) && !cfg_[key].is_null(); }

  Result<int64_t> integer(const char* key, int64_t def, int64_t lo, int64_t hi) const {
    if (!has(key)) return def;
    if (auto v = json_integer(cfg_[key], lo, hi)) return *v;
    return bad(key, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  Result<double> number(const char* key, double def, double lo, double hi) const {
    if (!has(key)) return def;
    const json& v = cfg_[key];
    if (v.is_number()) {
      const double d = v.get<double>();
      if (d >= lo && d <= hi) return d;  // false for NaN, which JSON cannot hold anyway
    }
    char range[64];
    std::snprintf(range, sizeof range, "a number from %g to %g", lo, hi);
    return bad(key, range);
  }
  Result<bool> boolean(const char* key, bool def) const {
    if (!has(key)) return def;
    if (cfg_[key].is_boolean()) return cfg_[key].get<bool>();
    return bad(key, "true or false");
  }

 private:
  Status bad(const char* key, const std::string& expected) const {
    return bad_file(path_, std::string("config.") + key + " must be " + expected + ", got " +
                               cfg_[key].dump(-1, ' ', false, json::error_handler_t::replace));
  }
  const json& cfg_;
  const std::filesystem::path& path_;
};

// "layers.N." at the start of a name: N, or -1 when the name is not a layer tensor. A
// number beyond the layer limit is an error (it cannot be a real layer).
Result<int64_t> layer_index(const std::string& rest) {
  static constexpr std::string_view kPrefix = "layers.";
  if (rest.compare(0, kPrefix.size(), kPrefix) != 0) return int64_t{-1};
  const size_t dot = rest.find('.', kPrefix.size());
  if (dot == std::string::npos || dot == kPrefix.size()) return int64_t{-1};
  const std::string_view digits(rest.data() + kPrefix.size(), dot - kPrefix.size());
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return int64_t{-1};
  const auto v = util::parse_integer<int64_t>(digits, 0, kMaxTopologyCount - 1);
  if (!v.ok())
    return error::invalid_argument("layer number " + std::string(digits.substr(0, 24)) + " is beyond the " +
                                   std::to_string(kMaxTopologyCount) + " layers a topology may have");
  return v.value;
}

Result<Shapes> read_shapes(const json& j, const std::filesystem::path& path) {
  if (!j.contains("components") || !j["components"].is_array())
    return bad_file(path, "'components' must be a list of {name, role, tensors}");
  Shapes shapes;
  for (const auto& c : j["components"]) {
    if (!c.is_object() || !c.contains("tensors") || !c["tensors"].is_object())
      return bad_file(path, "every component needs a 'tensors' object of name -> shape");
    for (const auto& [name, shape] : c["tensors"].items()) {
      if (!shape.is_array() || shape.empty() || shape.size() > 8)
        return bad_file(path, "the shape of '" + name + "' must be a list of 1 to 8 dimensions");
      std::vector<int64_t> dims;
      for (const auto& d : shape) {
        const auto v = json_integer(d, 1, kMaxDim);
        if (!v)
          return bad_file(path, "the shape of '" + name + "' has a dimension that is not an integer from 1 to " +
                                    std::to_string(kMaxDim));
        dims.push_back(*v);
      }
      shapes[name] = std::move(dims);
    }
  }
  return shapes;
}

}  // namespace

Result<Topology> load_topology_file(const std::filesystem::path& path) {
  auto text = util::read_file(path, "the topology file", kMaxTopologyFileBytes);
  if (!text) return text.status();
  return parse_topology(*text, path);
}

Result<Topology> parse_topology(const std::string& text, const std::filesystem::path& path) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad_file(path, "is not valid JSON (a topology file is one JSON object)");
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != "tensorfs-topology-v2")
    return bad_file(path, "'format' must be \"tensorfs-topology-v2\" (a file of Hugging Face tensor shapes)");
  auto shapes_r = read_shapes(j, path);
  if (!shapes_r) return shapes_r.status();
  const Shapes& shapes = *shapes_r;
  static const json kEmpty = json::object();
  const json& cfg_json = j.contains("config") && j["config"].is_object() ? j["config"] : kEmpty;
  const Config cfg(cfg_json, path);

  // The language model's tensors: multimodal checkpoints nest it under model.language_model.
  ShapeReader r{shapes, shapes.count("model.language_model.embed_tokens.weight") ? "model.language_model." : "model."};
  const auto* embed = r.get("embed_tokens.weight");
  if (!embed || embed->size() != 2)
    return bad_file(path, "no " + r.prefix + "embed_tokens.weight [vocab, hidden]; is it a language model?");
  Topology t;
  t.name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : path.stem().string();
  t.n_vocab = (*embed)[0], t.n_embd = (*embed)[1];
  t.tied_embeddings = !shapes.count("lm_head.weight");
  std::set<int64_t> layers, full;
  for (const auto& [name, _] : shapes) {
    if (name.rfind(r.prefix, 0) != 0) continue;
    const std::string rest = name.substr(r.prefix.size());
    auto il = layer_index(rest);
    if (!il) return bad_file(path, il.status().message() + " ('" + name.substr(0, 80) + "')");
    if (*il < 0) continue;
    layers.insert(*il);
    if (rest.find(".self_attn.") != std::string::npos) full.insert(*il);
  }
  t.n_layer = static_cast<int64_t>(layers.size());
  if (t.n_layer == 0 || *layers.rbegin() != t.n_layer - 1) return bad_file(path, "the layers are not numbered 0..N-1");
  if (full.empty()) return bad_file(path, "no layer has self_attn tensors");
  const std::string l0 = "layers." + std::to_string(*full.begin()) + ".";
  const bool hybrid = full.size() < layers.size();
  const bool mixtral = r.get("layers.0.block_sparse_moe.gate.weight") != nullptr;
  t.qk_norm = r.get(l0 + "self_attn.q_norm.weight") != nullptr;
  t.n_expert = mixtral ? r.dim("layers.0.block_sparse_moe.gate.weight", 0) : r.dim("layers.0.mlp.gate.weight", 0);
  if (hybrid) t.arch = "qwen35moe";
  else if (t.qk_norm) t.arch = t.n_expert ? "qwen3moe" : "qwen3";
  else t.arch = "llama";
  if (hybrid && !t.n_expert) return bad_file(path, "a hybrid linear-attention model without experts is not supported");

  // Attention: o_proj is [hidden, heads x head_dim]; q_proj twice that when it carries a gate.
  const int64_t q_out = r.dim(l0 + "self_attn.q_proj.weight", 0), o_in = r.dim(l0 + "self_attn.o_proj.weight", 1);
  auto head_dim = cfg.integer("head_dim", t.qk_norm ? r.dim(l0 + "self_attn.q_norm.weight", 0) : 0, 1, kMaxTopologyWidth);
  if (!head_dim) return head_dim.status();
  t.head_dim = *head_dim;
  if (!t.head_dim) {
    auto heads = cfg.integer("num_attention_heads", 0, 1, kMaxTopologyCount);
    if (!heads) return heads.status();
    t.head_dim = *heads ? o_in / *heads : 128;
  }
  if (!t.head_dim || !q_out || !o_in || o_in % t.head_dim) return bad_file(path, "cannot derive the attention heads of " + l0);
  t.n_head = o_in / t.head_dim;
  t.n_head_kv = r.dim(l0 + "self_attn.k_proj.weight", 0) / t.head_dim;
  if (t.n_head_kv <= 0 || t.n_head % t.n_head_kv)
    return bad_file(path, r.prefix + l0 + "self_attn.k_proj.weight does not give a KV head count that divides the " +
                              std::to_string(t.n_head) + " query heads of " + std::to_string(t.head_dim) +
                              "; give the head size in a \"config\" object (head_dim or num_attention_heads)");
  t.attn_output_gate = q_out == 2 * o_in;
  t.n_rot = t.head_dim;

  if (hybrid) {
    t.full_attn_interval = *full.begin() + 1;
    for (int64_t il = 0; il < t.n_layer; ++il)
      if (((il + 1) % t.full_attn_interval == 0) != (full.count(il) > 0))
        return bad_file(path, "full-attention layers are not every " + std::to_string(t.full_attn_interval) + "th layer");
    const int64_t ll = *full.begin() == 0 ? 1 : 0;
    const std::string la = "layers." + std::to_string(ll) + ".linear_attn.";
    t.ssm_v_heads = r.dim(la + "A_log", 0);
    t.ssm_state = r.dim(la + "norm.weight", 0);
    t.ssm_conv_kernel = r.dim(la + "conv1d.weight", 2);
    const int64_t qkv = r.dim(la + "in_proj_qkv.weight", 0);
    if (!t.ssm_v_heads || !t.ssm_state || !t.ssm_conv_kernel || qkv <= t.ssm_v_heads * t.ssm_state)
      return bad_file(path, "cannot derive the linear-attention shape from " + r.prefix + la + "*");
    t.ssm_groups = (qkv - t.ssm_v_heads * t.ssm_state) / (2 * t.ssm_state);
  }
  if (mixtral) {
    t.n_ff_exp = r.dim("layers.0.block_sparse_moe.experts.0.w1.weight", 0);
  } else if (t.n_expert) {
    t.n_ff_exp = r.get("layers.0.mlp.experts.gate_up_proj") ? r.dim("layers.0.mlp.experts.gate_up_proj", 1) / 2
                                                            : r.dim("layers.0.mlp.experts.0.gate_proj.weight", 0);
    t.n_ff_shexp = r.dim("layers.0.mlp.shared_expert.gate_proj.weight", 0);
  } else {
    t.n_ff = r.dim("layers.0.mlp.gate_proj.weight", 0);
  }
  if (t.n_expert && !t.n_ff_exp) return bad_file(path, "cannot find the expert feed-forward width in layer 0");
  if (!t.n_expert && !t.n_ff) return bad_file(path, "cannot find the feed-forward width in layer 0");

  // What shapes cannot say: the architecture's published defaults, or the file's config.
  if (t.arch == "qwen35moe") {
    t.n_expert_used = 8, t.n_ctx_train = 262144, t.rope_base = 1e7, t.n_rot = t.head_dim / 4;
    t.rope_sections[0] = 11, t.rope_sections[1] = 11, t.rope_sections[2] = 10;
  } else if (t.arch.rfind("qwen3", 0) == 0) {
    t.n_expert_used = t.n_expert ? 8 : 0, t.n_ctx_train = 40960, t.rope_base = 1e6;
  } else {
    t.n_expert_used = t.n_expert ? 2 : 0, t.n_ctx_train = mixtral ? 32768 : 131072;
    t.rope_base = mixtral ? 1e6 : 500000.0, t.eps = 1e-5;
  }
  t.expert_weights_norm = t.n_expert > 0;
  // A default above the expert count (8 of a 4-expert file) is capped, as scale_topology does.
  const int64_t used = std::min(t.n_expert_used, t.n_expert);
  auto n_used = cfg.integer("num_experts_per_tok", used, t.n_expert ? 1 : 0, t.n_expert);
  auto n_ctx = cfg.integer("max_position_embeddings", t.n_ctx_train, 1, kMaxTopologyContext);
  auto rope = cfg.number("rope_theta", t.rope_base, 1e-3, 1e12);
  auto eps = cfg.number("rms_norm_eps", t.eps, 1e-12, 0.5);
  auto norm = cfg.boolean("norm_topk_prob", t.expert_weights_norm);
  auto partial = cfg.number("partial_rotary_factor", 0, 0, 1);
  for (const Status& st : {n_used.status(), n_ctx.status(), rope.status(), eps.status(), norm.status(), partial.status()})
    if (!st) return st;
  t.n_expert_used = *n_used, t.n_ctx_train = *n_ctx, t.rope_base = *rope, t.eps = *eps, t.expert_weights_norm = *norm;
  // In [0, 1] times a head size of at most 2^22: the rounded product fits int64.
  if (cfg.has("partial_rotary_factor")) t.n_rot = static_cast<int64_t>(*partial * static_cast<double>(t.head_dim));
  if (auto st = check_topology(t); !st) return bad_file(path, st.message());
  return t;
}

}  // namespace sy::synth
