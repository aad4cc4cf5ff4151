#include "synth/topology.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

namespace sy::synth {
namespace {

Topology dense(std::string name, std::string arch, int64_t vocab, int64_t embd, int64_t layers, int64_t heads,
               int64_t kv, int64_t hd, int64_t ff) {
  Topology t;
  t.name = std::move(name);
  t.arch = std::move(arch);
  t.n_vocab = vocab, t.n_embd = embd, t.n_layer = layers, t.n_head = heads, t.n_head_kv = kv, t.head_dim = hd;
  t.n_ff = ff;
  t.n_rot = hd;
  return t;
}

// Published configurations (config.json of each Hugging Face checkpoint).
std::vector<Topology> builtins() {
  std::vector<Topology> v;
  {  // Qwen/Qwen3.6-35B-A3B, language model; the multi-token-prediction head is not written.
    Topology t = dense("qwen3.6-35b-a3b", "qwen35moe", 248320, 2048, 40, 16, 2, 256, 0);
    t.n_expert = 256, t.n_expert_used = 8, t.n_ff_exp = 512, t.n_ff_shexp = 512, t.expert_weights_norm = true;
    t.qk_norm = true, t.attn_output_gate = true;
    t.full_attn_interval = 4, t.ssm_conv_kernel = 4, t.ssm_state = 128, t.ssm_groups = 16, t.ssm_v_heads = 32;
    t.n_ctx_train = 262144, t.n_rot = 64, t.rope_base = 1e7;
    t.rope_sections[0] = 11, t.rope_sections[1] = 11, t.rope_sections[2] = 10;
    v.push_back(t);
  }
  {  // Qwen/Qwen3-30B-A3B
    Topology t = dense("qwen3-30b-a3b", "qwen3moe", 151936, 2048, 48, 32, 4, 128, 6144);
    t.n_expert = 128, t.n_expert_used = 8, t.n_ff_exp = 768, t.expert_weights_norm = true, t.qk_norm = true;
    t.n_ctx_train = 40960, t.rope_base = 1e6;
    v.push_back(t);
  }
  {  // Qwen/Qwen3-0.6B
    Topology t = dense("qwen3-0.6b", "qwen3", 151936, 1024, 28, 16, 8, 128, 3072);
    t.qk_norm = true, t.tied_embeddings = true, t.n_ctx_train = 40960, t.rope_base = 1e6;
    v.push_back(t);
  }
  {  // Qwen/Qwen3-8B
    Topology t = dense("qwen3-8b", "qwen3", 151936, 4096, 36, 32, 8, 128, 12288);
    t.qk_norm = true, t.n_ctx_train = 40960, t.rope_base = 1e6;
    v.push_back(t);
  }
  {  // meta-llama/Llama-3.1-8B
    Topology t = dense("llama-3.1-8b", "llama", 128256, 4096, 32, 32, 8, 128, 14336);
    t.n_ctx_train = 131072, t.rope_base = 500000.0, t.eps = 1e-5;
    v.push_back(t);
  }
  {  // mistralai/Mixtral-8x7B-v0.1 (llama architecture with experts, as llama.cpp writes it)
    Topology t = dense("mixtral-8x7b", "llama", 32000, 4096, 32, 32, 8, 128, 0);
    t.n_expert = 8, t.n_expert_used = 2, t.n_ff_exp = 14336, t.expert_weights_norm = true;
    t.n_ctx_train = 32768, t.rope_base = 1e6, t.eps = 1e-5;
    v.push_back(t);
  }
  {  // The built-in default ("demo"): Qwen3.6's hybrid layout at toy size, for the demo and tests.
    Topology t = dense("demo", "qwen35moe", 512, 256, 4, 4, 2, 64, 0);
    t.n_expert = 8, t.n_expert_used = 2, t.n_ff_exp = 128, t.n_ff_shexp = 128, t.qk_norm = true, t.attn_output_gate = true;
    t.full_attn_interval = 4, t.ssm_conv_kernel = 4, t.ssm_state = 32, t.ssm_groups = 2, t.ssm_v_heads = 4;
    t.n_rot = 16, t.rope_base = 1e7;
    v.push_back(t);
  }
  {
    Topology t = dense("demo-llama", "llama", 512, 256, 4, 4, 2, 64, 256);
    t.rope_base = 5e5;
    v.push_back(t);
  }
  return v;
}

using Shapes = std::map<std::string, std::vector<int64_t>>;

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

}  // namespace

std::vector<std::string> builtin_topology_names() {
  std::vector<std::string> names;
  for (const auto& t : builtins()) names.push_back(t.name);
  return names;
}

Result<Topology> builtin_topology(const std::string& name) {
  for (auto& t : builtins())
    if (t.name == name) return t;
  std::string list;
  for (const auto& n : builtin_topology_names()) list += (list.empty() ? "" : ", ") + n;
  return error::not_found("unknown topology '" + name + "'; built in: " + list + " (or give a topology file)");
}

Result<Topology> load_topology_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return error::not_found(path.string() + ": cannot open the topology file");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad_file(path, "is not valid JSON (a topology file is one JSON object)");
  if (j.value("format", "") != "tensorfs-topology-v2")
    return bad_file(path, "'format' must be \"tensorfs-topology-v2\" (a file of Hugging Face tensor shapes)");
  if (!j.contains("components") || !j["components"].is_array())
    return bad_file(path, "'components' must be a list of {name, role, tensors}");
  Shapes shapes;
  for (const auto& c : j["components"]) {
    if (!c.is_object() || !c.contains("tensors") || !c["tensors"].is_object())
      return bad_file(path, "every component needs a 'tensors' object of name -> shape");
    for (const auto& [name, shape] : c["tensors"].items()) {
      if (!shape.is_array()) return bad_file(path, "the shape of '" + name + "' is not a list");
      std::vector<int64_t> dims;
      for (const auto& d : shape) {
        if (!d.is_number_integer() || d.get<int64_t>() <= 0)
          return bad_file(path, "the shape of '" + name + "' has a dimension that is not a positive integer");
        dims.push_back(d.get<int64_t>());
      }
      shapes[name] = std::move(dims);
    }
  }
  const nlohmann::json cfg = j.contains("config") && j["config"].is_object() ? j["config"] : nlohmann::json::object();

  // The language model's tensors: multimodal checkpoints nest it under model.language_model.
  ShapeReader r{shapes, shapes.count("model.language_model.embed_tokens.weight") ? "model.language_model." : "model."};
  const auto* embed = r.get("embed_tokens.weight");
  if (!embed || embed->size() != 2)
    return bad_file(path, "no " + r.prefix + "embed_tokens.weight [vocab, hidden]; is it a language model?");
  Topology t;
  t.name = j.value("name", path.stem().string());
  t.n_vocab = (*embed)[0], t.n_embd = (*embed)[1];
  t.tied_embeddings = !shapes.count("lm_head.weight");
  static const std::regex kLayer(R"(^layers\.([0-9]+)\.)");
  std::set<int64_t> layers, full;
  for (const auto& [name, _] : shapes) {
    if (name.rfind(r.prefix, 0) != 0) continue;
    std::smatch m;
    const std::string rest = name.substr(r.prefix.size());
    if (!std::regex_search(rest, m, kLayer)) continue;
    const int64_t il = std::stoll(m[1]);
    layers.insert(il);
    if (rest.find(".self_attn.") != std::string::npos) full.insert(il);
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
  t.head_dim = cfg.value("head_dim", t.qk_norm ? r.dim(l0 + "self_attn.q_norm.weight", 0) : 0);
  const int64_t q_out = r.dim(l0 + "self_attn.q_proj.weight", 0), o_in = r.dim(l0 + "self_attn.o_proj.weight", 1);
  if (!t.head_dim) t.head_dim = cfg.contains("num_attention_heads") ? o_in / cfg["num_attention_heads"].get<int64_t>() : 128;
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
  t.n_expert_used = cfg.value("num_experts_per_tok", t.n_expert_used);
  t.n_ctx_train = cfg.value("max_position_embeddings", t.n_ctx_train);
  t.rope_base = cfg.value("rope_theta", t.rope_base);
  t.eps = cfg.value("rms_norm_eps", t.eps);
  t.expert_weights_norm = cfg.value("norm_topk_prob", t.expert_weights_norm);
  if (cfg.contains("partial_rotary_factor"))
    t.n_rot = static_cast<int64_t>(cfg["partial_rotary_factor"].get<double>() * static_cast<double>(t.head_dim));
  if (t.n_expert && (t.n_expert_used < 1 || t.n_expert_used > t.n_expert))
    return bad_file(path, "config.num_experts_per_tok must be between 1 and the expert count");
  return t;
}

Result<Topology> resolve_topology(const std::string& name_or_path) {
  auto b = builtin_topology(name_or_path);
  if (!b && std::filesystem::is_regular_file(name_or_path)) return load_topology_file(name_or_path);
  return b;
}

Status scale_topology(Topology& t, int64_t layers, int64_t experts, int64_t vocab) {
  if (layers < 0 || experts < 0 || vocab < 0) return error::invalid_argument("--layers, --experts and --vocab must not be negative (0 keeps the topology's own)");
  if (layers) {
    if (t.full_attn_interval && layers % t.full_attn_interval)
      return error::invalid_argument("--layers must be a multiple of " + std::to_string(t.full_attn_interval) + " for " +
                                     t.name + " (one full-attention layer per " +
                                     std::to_string(t.full_attn_interval) + ")");
    t.n_layer = layers;
  }
  if (experts) {
    if (!t.n_expert) return error::invalid_argument("--experts: " + t.name + " has no experts");
    t.n_expert = experts;
    t.n_expert_used = std::min(t.n_expert_used, experts);
  }
  if (vocab) {
    if (vocab < 300) return error::invalid_argument("--vocab must be at least 300 (control and byte tokens need 259)");
    t.n_vocab = vocab;
  }
  return {};
}

}  // namespace sy::synth
