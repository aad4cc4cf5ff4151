#include "synth/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

Result<Topology> resolve_topology(const std::string& name_or_path) {
  auto b = builtin_topology(name_or_path);
  if (b) return b;
  // Anything that looks like a path is read as one, so a missing file or a directory is
  // reported as such rather than as an unknown built-in name.
  std::error_code ec;
  const std::filesystem::path p(name_or_path);
  if (std::filesystem::exists(p, ec) || name_or_path.find('/') != std::string::npos || p.extension() == ".json")
    return load_topology_file(p);
  return b;
}

namespace {

Status out_of_bounds(const std::string& what, int64_t v, int64_t lo, int64_t hi) {
  return error::invalid_argument(what + " is " + std::to_string(v) + "; it must be from " + std::to_string(lo) + " to " +
                                 std::to_string(hi));
}

}  // namespace

Status check_topology(const Topology& t) {
  const struct {
    const char* what;
    int64_t v, lo, hi;
  } fields[] = {
      {"the vocabulary", t.n_vocab, 1, kMaxTopologyVocab},
      {"the hidden size", t.n_embd, 1, kMaxTopologyWidth},
      {"the layer count", t.n_layer, 1, kMaxTopologyCount},
      {"the attention head count", t.n_head, 1, kMaxTopologyCount},
      {"the KV head count", t.n_head_kv, 1, t.n_head},
      {"the head size", t.head_dim, 1, kMaxTopologyWidth},
      {"the feed-forward width", t.n_ff, 0, kMaxTopologyWidth},
      {"the expert count", t.n_expert, 0, kMaxTopologyCount},
      {"the experts used per token", t.n_expert_used, t.n_expert ? 1 : 0, t.n_expert},
      {"the expert feed-forward width", t.n_ff_exp, 0, kMaxTopologyWidth},
      {"the shared-expert width", t.n_ff_shexp, 0, kMaxTopologyWidth},
      {"the full-attention interval", t.full_attn_interval, 0, t.n_layer},
      {"the convolution kernel", t.ssm_conv_kernel, 0, kMaxTopologyWidth},
      {"the delta-net state size", t.ssm_state, 0, kMaxTopologyWidth},
      {"the delta-net group count", t.ssm_groups, t.full_attn_interval ? 1 : 0, kMaxTopologyCount},
      {"the delta-net value heads", t.ssm_v_heads, 0, kMaxTopologyCount},
      {"the training context", t.n_ctx_train, 1, kMaxTopologyContext},
      {"the rotary dimensions", t.n_rot, 0, t.head_dim},
  };
  for (const auto& f : fields)
    if (f.v < f.lo || f.v > f.hi) return out_of_bounds(std::string(f.what) + " of " + t.name, f.v, f.lo, f.hi);
  if (!(std::isfinite(t.rope_base) && t.rope_base > 0))
    return error::invalid_argument("the RoPE base of " + t.name + " must be a positive number");
  if (!(std::isfinite(t.eps) && t.eps > 0 && t.eps < 1))
    return error::invalid_argument("the norm epsilon of " + t.name + " must be between 0 and 1");
  // The element count in doubles (no overflow to worry about): every product the planner
  // and writer form in int64 is below it, so this one bound keeps them all in range.
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  const double attn = d(t.n_embd) * d(t.head_dim) * (2 * d(t.n_head) + 2 * d(t.n_head_kv));
  const double ffn = 3 * d(t.n_embd) * (d(t.n_ff) + d(t.n_expert) * d(t.n_ff_exp) + d(t.n_ff_shexp));
  const double ssm = d(t.n_embd) * d(t.ssm_v_heads) * d(t.ssm_state) * 4;
  const double total = d(t.n_layer) * (attn + ffn + ssm) + 2 * d(t.n_vocab) * d(t.n_embd);
  if (total > kMaxTopologyElements)
  {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3g weights, more than the %.3g", total, kMaxTopologyElements);
    return error::invalid_argument(t.name + " would have about " + buf + " (2^48) a topology may describe");
  }
  return {};
}

Status scale_topology(Topology& t, int64_t layers, int64_t experts, int64_t vocab, bool grow) {
  if (layers < 0 || experts < 0 || vocab < 0) return error::invalid_argument("--layers, --experts and --vocab must not be negative (0 keeps the topology's own)");
  if (layers > kMaxTopologyCount) return out_of_bounds("--layers", layers, 0, kMaxTopologyCount);
  if (experts > kMaxTopologyCount) return out_of_bounds("--experts", experts, 0, kMaxTopologyCount);
  if (vocab > kMaxTopologyVocab) return out_of_bounds("--vocab", vocab, 0, kMaxTopologyVocab);
  if (!grow && layers > t.n_layer)
    return error::invalid_argument("--layers " + std::to_string(layers) + " is more than the " + std::to_string(t.n_layer) +
                                   " layers " + t.name + " has; give at most " + std::to_string(t.n_layer) +
                                   ", or add --grow to repeat its layers past the real model");
  if (!grow && t.n_expert && experts > t.n_expert)
    return error::invalid_argument("--experts " + std::to_string(experts) + " is more than the " +
                                   std::to_string(t.n_expert) + " routed experts per layer " + t.name +
                                   " has; give at most " + std::to_string(t.n_expert) +
                                   ", or add --grow to add experts the real model does not have");
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
  return check_topology(t);
}

}  // namespace sy::synth
