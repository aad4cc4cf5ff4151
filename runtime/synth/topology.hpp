// A model's shape without its weights: what `synth` writes and what `plan --topology`
// accounts for. Built-in topologies carry the published configurations of the models our
// users run; a topology file (Hugging Face tensor shapes, "tensorfs-topology-v2") gives
// the shapes of any other checkpoint of a known architecture.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "switchyard/status.hpp"

namespace sy::synth {

struct Topology {
  std::string name;
  std::string arch;  ///< GGUF architecture: llama, qwen3, qwen3moe, qwen35moe
  int64_t n_vocab = 0, n_embd = 0, n_layer = 0;
  int64_t n_head = 0, n_head_kv = 0, head_dim = 0;
  int64_t n_ff = 0;  ///< dense feed-forward width (0 when every layer is MoE)
  int64_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_ff_shexp = 0;
  bool expert_weights_norm = false;
  bool qk_norm = false;          ///< per-head RMS norm of q and k (Qwen3)
  bool attn_output_gate = false; ///< q projection also yields a sigmoid output gate (Qwen3.5/3.6)
  bool tied_embeddings = false;  ///< no output.weight: the token embeddings serve as the LM head
  // Gated delta-net layers (Qwen3.5/3.6): every full_attn_interval-th layer is full attention.
  int64_t full_attn_interval = 0, ssm_conv_kernel = 0, ssm_state = 0, ssm_groups = 0, ssm_v_heads = 0;
  int64_t n_ctx_train = 4096, n_rot = 0;
  int rope_sections[4] = {0, 0, 0, 0};
  double rope_base = 10000.0, eps = 1e-6;
};

// Bounds on a topology, the same as the GGUF loader's for the hyper-parameters it shares
// (model/hparams.cpp): they keep every size computed from a topology inside int64.
inline constexpr int64_t kMaxTopologyWidth = int64_t{1} << 22;   ///< hidden, feed-forward and head sizes
inline constexpr int64_t kMaxTopologyCount = int64_t{1} << 16;   ///< layers, heads, experts
inline constexpr int64_t kMaxTopologyVocab = int64_t{1} << 24;
inline constexpr int64_t kMaxTopologyContext = int64_t{1} << 30;
inline constexpr double kMaxTopologyElements = 281474976710656.0;  ///< 2^48 weights

/// Names of the built-in topologies, in a stable order.
std::vector<std::string> builtin_topology_names();

/// A built-in topology by name ("qwen3.6-35b-a3b"); not_found names the choices.
Result<Topology> builtin_topology(const std::string& name);

/// Reads a topology file: the language-model tensors of a "tensorfs-topology-v2" shapes
/// file (Hugging Face names). Numbers that shapes cannot carry (experts used per token,
/// RoPE base, context length) come from the architecture's published defaults, or from an
/// optional top-level "config" object with config.json keys.
Result<Topology> load_topology_file(const std::filesystem::path& path);

/// The same for text already read; `path` names the file in messages.
Result<Topology> parse_topology(const std::string& text, const std::filesystem::path& path);

/// A built-in name or a path to a topology file.
Result<Topology> resolve_topology(const std::string& name_or_path);

/// Checks every field against the bounds above and the whole against kMaxTopologyElements;
/// the message names the field, its value and the allowed range.
Status check_topology(const Topology& t);

/// Scaling for quick tests: fewer layers, experts or a smaller vocabulary (0 keeps the
/// topology's own). Keeps the hybrid layer pattern and the experts used per token valid.
/// More layers or experts than the topology has describe no real model, so they are
/// refused (naming both counts) unless `grow` is set (`--grow`).
Status scale_topology(Topology& t, int64_t layers, int64_t experts, int64_t vocab, bool grow = false);

}  // namespace sy::synth
