#include "model/hparams.hpp"

#include <charconv>
#include <cmath>

#include "switchyard/utf8.hpp"

namespace sy::model {
namespace {

// Far beyond any published model, and small enough that nothing sized from them (caches,
// per-layer tables, head-id arrays) can exhaust memory: a header past these is corrupt.
constexpr int64_t kMaxWidth = int64_t{1} << 22;   // embedding, feed-forward and head sizes
constexpr int64_t kMaxCount = int64_t{1} << 16;   // layers, heads, experts

std::string value_text(const MetaValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_integral_v<X>) {
          return std::to_string(x);
        } else if constexpr (std::is_floating_point_v<X>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<X, std::string>) {
          return "a string";
        } else {
          return "an array";
        }
      },
      v);
}

/// The value and, for numbers, its GGUF type: "1.5 (f32)", "a string".
std::string typed_text(const MetaValue& v) {
  if (std::holds_alternative<std::string>(v) || std::holds_alternative<MetaArray>(v)) return value_text(v);
  return value_text(v) + " (" + meta_type_name(meta_type_of(v)) + ")";
}

/// Reads "<arch>.<key>" values, keeping the first problem as a sentence naming the key,
/// the value found and the values allowed.
class KeyReader {
 public:
  KeyReader(const Metadata& md, std::string prefix) : md_(md), p_(std::move(prefix)) {}

  /// An integer in [lo, hi]; `def` when the key is absent (nullopt: the key is required).
  int64_t get(const std::string& key, std::optional<int64_t> def, int64_t lo, int64_t hi) {
    const MetaValue* v = md_.find(p_ + key);
    if (!v) {
      if (!def) fail("the model lacks the hyper-parameter " + p_ + key);
      return def.value_or(0);
    }
    return check(key, *v, lo, hi);
  }

  /// Like get(), for a key that may hold one value per layer: every layer must agree, since
  /// the engine runs one shape in every layer.
  /// With `uniform` false the first layer's value stands for all (the tensor shapes are
  /// checked per layer later).
  int64_t per_layer(const std::string& key, std::optional<int64_t> def, int64_t lo, int64_t hi, bool uniform = true) {
    const MetaValue* v = md_.find(p_ + key);
    const auto* arr = v ? std::get_if<MetaArray>(v) : nullptr;
    if (!arr) return get(key, def, lo, hi);
    if (arr->items.empty()) {
      fail(p_ + key + " is an empty array; it must give a value per layer");
      return 0;
    }
    const int64_t first = check(key, arr->items.front(), lo, hi);
    for (size_t i = 1; uniform && i < arr->items.size() && status_; ++i) {
      const auto vi = meta_as_int(arr->items[i]);
      if (!vi || *vi != first)
        fail(p_ + key + " differs between layers (" + std::to_string(first) + " in layer 0, " +
             value_text(arr->items[i]) + " in layer " + std::to_string(i) +
             "); models whose layers differ in shape are not supported");
    }
    return first;
  }

  /// A finite number in (lo, hi]; `def` when absent.
  double number(const std::string& key, double def, double lo, double hi) {
    const MetaValue* v = md_.find(p_ + key);
    if (!v) return def;
    const auto d = md_.get_float(p_ + key);
    if (!d) {
      fail(p_ + key + " is " + typed_text(*v) + "; it must be a number");
      return def;
    }
    if (!std::isfinite(*d) || *d <= lo || *d > hi) {
      fail(p_ + key + " is " + value_text(*v) + "; it must be a number above " + trim(lo) + " and at most " + trim(hi));
      return def;
    }
    return *d;
  }

  void fail(std::string why) {
    if (status_) status_ = error::invalid_argument(std::move(why));
  }
  [[nodiscard]] const Status& status() const { return status_; }
  [[nodiscard]] const std::string& prefix() const { return p_; }

 private:
  static std::string trim(double d) {
    std::string s = std::to_string(d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  int64_t check(const std::string& key, const MetaValue& v, int64_t lo, int64_t hi) {
    const auto i = meta_as_int(v);
    if (std::holds_alternative<bool>(v) || (!i && !std::holds_alternative<uint64_t>(v))) {
      fail(p_ + key + " is " + typed_text(v) + "; it must be an integer");
      return lo;
    }
    if (!i || *i < lo || *i > hi) {
      fail(p_ + key + " is " + value_text(v) + "; it must be between " + std::to_string(lo) + " and " +
           std::to_string(hi));
      return lo;
    }
    return *i;
  }

  const Metadata& md_;
  std::string p_;
  Status status_ = Status::ok();
};

bool is_moe_only(const std::string& arch) { return arch == "qwen2moe" || arch == "qwen3moe" || arch == "qwen35moe"; }

}  // namespace

int64_t HParams::n_full_attention_layers() const {
  int64_t n = 0;
  for (int64_t il = 0; il < n_layer; ++il) n += is_full_attention(il) ? 1 : 0;
  return n;
}

Result<HParams> read_hparams(const Metadata& md, int64_t n_vocab) {
  HParams h;
  const MetaValue* av = md.find("general.architecture");
  if (!av) return error::invalid_argument("the model has no general.architecture key; is it a language model?");
  const auto* arch = std::get_if<std::string>(av);
  if (!arch || arch->empty())
    return error::invalid_argument("general.architecture is " + (arch ? std::string("empty") : typed_text(*av)) +
                                   "; it must name the architecture, e.g. \"llama\"");
  // Every hyper-parameter key starts with the name, and GGUF keys must be UTF-8 (the reader
  // refuses others), so no model can have such an architecture's keys; refusing it here
  // also keeps the bytes out of every message below.
  if (first_invalid_utf8(*arch))
    return error::invalid_argument("general.architecture '" + escape_invalid_utf8(*arch) +
                                   "' is not UTF-8, so it names no architecture (e.g. \"llama\")");
  h.arch = *arch;
  KeyReader r(md, h.arch + ".");
  const std::string& p = r.prefix();
  h.n_vocab = n_vocab;
  h.n_embd = r.get("embedding_length", std::nullopt, 1, kMaxWidth);
  h.n_layer = r.get("block_count", std::nullopt, 1, kMaxCount);
  h.n_ctx_train = r.get("context_length", 4096, 1, int64_t{1} << 40);
  h.n_head = r.per_layer("attention.head_count", std::nullopt, 1, kMaxCount);
  h.n_head_kv = r.per_layer("attention.head_count_kv", h.n_head, 1, kMaxCount);
  if (!r.status()) return r.status();
  if (!md.find(p + "attention.key_length") && h.n_embd % h.n_head != 0)
    return error::invalid_argument(p + "embedding_length (" + std::to_string(h.n_embd) +
                                   ") is not a multiple of " + p + "attention.head_count (" +
                                   std::to_string(h.n_head) + "), so the head size needs " + p +
                                   "attention.key_length");
  h.head_dim_k = r.get("attention.key_length", h.n_embd / h.n_head, 1, kMaxWidth);
  h.head_dim_v = r.get("attention.value_length", h.head_dim_k, 1, kMaxWidth);
  h.n_ff = r.per_layer("feed_forward_length", 0, 0, kMaxWidth, false);
  h.eps = static_cast<float>(r.number("attention.layer_norm_rms_epsilon", 1e-5, 0.0, 1.0));
  h.n_rot = r.get("rope.dimension_count", h.head_dim_k, 0, kMaxWidth);
  h.rope_base = static_cast<float>(r.number("rope.freq_base", 10000.0, 0.0, 1e30));
  // Only linear scaling is computed; YaRN and LongRoPE files run wrong at every position
  // if their factor is taken as linear, so they are refused rather than guessed at.
  if (auto type = md.get_string(p + "rope.scaling.type"); type && *type != "none" && *type != "linear")
    return error::unsupported(p + "rope.scaling.type is '" + escape_invalid_utf8(*type) +
                              "', which the engine does not compute yet (it computes linear scaling); use a "
                              "file converted without rope scaling (the context it was trained on)");
  if (auto f = md.get_float(p + "rope.scaling.factor"); f && std::isfinite(*f) && *f > 0)
    h.rope_scale = static_cast<float>(1.0 / *f);
  if (const auto* v = md.find(p + "rope.dimension_sections"); v && std::holds_alternative<MetaArray>(*v)) {
    const auto& a = std::get<MetaArray>(*v);
    for (size_t i = 0; i < a.items.size() && i < 4; ++i) {
      const auto s = meta_as_int(a.items[i]);
      if (!s || *s < 0 || *s > kMaxWidth)
        return error::invalid_argument(p + "rope.dimension_sections[" + std::to_string(i) + "] is " +
                                       value_text(a.items[i]) + "; it must be a count of rotated pairs");
      h.rope_sections[i] = static_cast<int>(*s);
    }
  }
  h.n_expert = r.get("expert_count", 0, 0, kMaxCount);
  h.n_expert_used = r.get("expert_used_count", 0, 0, kMaxCount);
  // Without the key, llama.cpp takes the Qwen MoE experts' width as feed_forward_length
  // shared among the experts used, and Mixtral's as feed_forward_length itself.
  const int64_t ff_exp_default = is_moe_only(h.arch) && h.n_expert_used > 0 ? h.n_ff / h.n_expert_used : h.n_ff;
  h.n_ff_exp = r.get("expert_feed_forward_length", ff_exp_default, 0, kMaxWidth);
  // Shared experts: their width (Qwen), or a count of expert-sized ones (DeepSeek); none
  // when neither key is there.
  const int64_t n_shared = r.get("expert_shared_count", 0, 0, kMaxCount);
  h.n_ff_shexp = r.get("expert_shared_feed_forward_length", h.n_ff_exp * n_shared, 0, kMaxWidth * 64);
  h.expert_weights_scale = static_cast<float>(r.number("expert_weights_scale", 1.0, -1e30, 1e30));
  h.expert_weights_norm = md.get_bool(p + "expert_weights_norm").value_or(false);
  h.expert_gating = r.get("expert_gating_func", 1, 0, 3) == 2 ? 1 : 0;  // GGUF: 1 softmax, 2 sigmoid
  h.n_leading_dense = r.get("leading_dense_block_count", 0, 0, kMaxCount);
  h.q_lora_rank = r.get("attention.q_lora_rank", 0, 0, kMaxWidth);
  h.kv_lora_rank = r.get("attention.kv_lora_rank", 0, 0, kMaxWidth);
  h.head_dim_k_mla = r.get("attention.key_length_mla", 0, 0, kMaxWidth);
  h.head_dim_v_mla = r.get("attention.value_length_mla", 0, 0, kMaxWidth);
  h.full_attn_interval = r.get("full_attention_interval", 0, 0, kMaxCount);
  h.ssm_conv_kernel = r.get("ssm.conv_kernel", 0, 0, 1024);
  h.ssm_state = r.get("ssm.state_size", 0, 0, 4096);
  h.ssm_groups = r.get("ssm.group_count", 0, 0, kMaxCount);
  h.ssm_v_heads = r.get("ssm.time_step_rank", 0, 0, kMaxCount);
  // Multi-token-prediction blocks (Qwen3.5/3.6, GLM): counted in block_count, after the
  // main stack; decoding never runs them.
  h.n_layer_nextn = r.get("nextn_predict_layers", 0, 0, kMaxCount);
  if (!r.status()) return r.status();

  auto bad = [&](const std::string& why) { return error::invalid_argument(why); };
  if (h.n_layer_nextn >= h.n_layer)
    return bad(p + "nextn_predict_layers (" + std::to_string(h.n_layer_nextn) + ") must be less than " + p +
               "block_count (" + std::to_string(h.n_layer) + ")");
  if (h.n_head % h.n_head_kv != 0)
    return bad("the model's attention shape is inconsistent: " + p + "attention.head_count (" +
               std::to_string(h.n_head) + ") query heads cannot share " + p + "attention.head_count_kv (" +
               std::to_string(h.n_head_kv) + ") KV heads; it must divide the query heads");
  if (h.n_rot % 2 != 0 || h.n_rot > h.head_dim_k)
    return bad(p + "rope.dimension_count is " + std::to_string(h.n_rot) +
               "; it must be an even number no larger than the head size " + p + "attention.key_length (" +
               std::to_string(h.head_dim_k) + ")");
  if (h.n_expert > 0 && (h.n_expert_used < 1 || h.n_expert_used > h.n_expert))
    return bad(p + "expert_used_count is " + std::to_string(h.n_expert_used) + "; it must be between 1 and " + p +
               "expert_count (" + std::to_string(h.n_expert) + ")");
  if (h.n_expert == 0 && is_moe_only(h.arch))
    return bad(p + "expert_count is " + std::string(md.find(p + "expert_count") ? "0" : "missing") + "; a " + h.arch +
               " model routes to experts, so it must be at least 1");
  if (h.n_expert > 0 && h.n_ff_exp < 1)
    return bad(p + "expert_feed_forward_length is 0; a model with experts needs their width");
  if (h.n_leading_dense > h.n_layer)
    return bad(p + "leading_dense_block_count (" + std::to_string(h.n_leading_dense) + ") exceeds " + p +
               "block_count (" + std::to_string(h.n_layer) + ")");
  h.n_layer -= h.n_layer_nextn;
  return h;
}

int64_t block_index(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return -1;
  const std::string_view rest = name.substr(4);
  int64_t n = -1;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.') return -1;
  return n;
}

Result<HParams> read_hparams(const Metadata& md, std::span<const TensorDesc> tensors) {
  const TensorDesc* embd = nullptr;
  int64_t blocks = 0;
  for (const auto& t : tensors) {
    if (t.name == "token_embd.weight") embd = &t;
    const int64_t b = block_index(t.name);
    if (b >= 0 && b < (int64_t{1} << 40)) blocks = std::max(blocks, b + 1);
  }
  if (!embd) return error::invalid_argument("the model has no token_embd.weight tensor");
  if (embd->shape.size() != 2 || embd->shape[0] < 1 || embd->shape[1] < 1)
    return error::invalid_argument("token_embd.weight must be a matrix [embedding_length, vocabulary]");
  auto h = read_hparams(md, static_cast<int64_t>(embd->shape[1]));
  if (!h) return h;
  const std::string p = h->arch + ".";
  const auto shape = "[" + std::to_string(embd->shape[0]) + ", " + std::to_string(embd->shape[1]) + "]";
  if (h->n_embd != static_cast<int64_t>(embd->shape[0]))
    return error::invalid_argument(p + "embedding_length is " + std::to_string(h->n_embd) +
                                   " but token_embd.weight is " + shape + ", " + std::to_string(embd->shape[0]) +
                                   " per token; the file's hyper-parameters disagree with its tensors");
  if (auto v = md.get_int(p + "vocab_size"); v && *v != h->n_vocab)
    return error::invalid_argument(p + "vocab_size is " + std::to_string(*v) + " but token_embd.weight is " + shape +
                                   ", " + std::to_string(h->n_vocab) + " tokens");
  const int64_t declared = h->n_layer + h->n_layer_nextn;
  if (blocks == 0)
    return error::invalid_argument(p + "block_count is " + std::to_string(declared) +
                                   " but the file has no blk.N tensors; the file is incomplete");
  if (declared != blocks)
    return error::invalid_argument(p + "block_count is " + std::to_string(declared) + " but the file has tensors for " +
                                   std::to_string(blocks) + " blocks (blk.0 to blk." + std::to_string(blocks - 1) +
                                   "); the header is corrupt or the file is incomplete");
  return h;
}

}  // namespace sy::model
