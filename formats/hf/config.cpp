#include "config.hpp"

#include <cmath>
#include <numbers>

#include "config_fields.hpp"
#include "qwen35.hpp"

namespace sy::hf {
namespace {

using nlohmann::json;

struct ArchInfo {
  const char* hf;
  const char* arch;
  bool permute_qk;
  bool moe;
};

// Llama and Mixtral keep llama.cpp's adjacent-pair rotation (the GGUF converter permutes
// q/k rows for it); the Qwen models rotate halves (neox) as transformers does.
constexpr ArchInfo kArchs[] = {
    {"LlamaForCausalLM", "llama", true, false},      {"MixtralForCausalLM", "llama", true, true},
    {"Qwen2ForCausalLM", "qwen2", false, false},     {"Qwen3ForCausalLM", "qwen3", false, false},
    {"Qwen3MoeForCausalLM", "qwen3moe", false, true},    {"Qwen2MoeForCausalLM", "qwen2moe", false, true},
    // Qwen3.5/3.6: the text model of the multimodal class (vision and MTP tensors are
    // skipped), or of a text-only export.
    {"Qwen3_5MoeForConditionalGeneration", "qwen35moe", false, true},
    {"Qwen3_5MoeForCausalLM", "qwen35moe", false, true},
};

// Llama 3's rope scaling as factors per rotated pair (rope_freqs.weight), the formula of
// Meta's reference code: wavelengths shorter than old_context / high_freq_factor keep their
// frequency, longer than old_context / low_freq_factor are divided by `factor`, and the band
// between is interpolated.
struct Llama3Scaling {
  double factor = 8, low = 1, high = 4, old_ctx = 8192;
};

std::vector<float> llama3_factors(const Llama3Scaling& s, double base, int64_t dims) {
  const double low_wavelen = s.old_ctx / s.low, high_wavelen = s.old_ctx / s.high;
  std::vector<float> out;
  for (int64_t i = 0; i < dims; i += 2) {
    const double freq = 1.0 / std::pow(base, static_cast<double>(i) / static_cast<double>(dims));
    const double wavelen = 2 * std::numbers::pi / freq;
    double f = 1.0;
    if (wavelen > low_wavelen) {
      f = s.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (s.old_ctx / wavelen - s.low) / (s.high - s.low);
      f = 1.0 / ((1 - smooth) / s.factor + smooth);
    }
    out.push_back(static_cast<float>(f));
  }
  return out;
}

// A string field, or `def` when it is absent or not a string (json::value() would throw).
std::string text_or(const json& j, const char* key, std::string def) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : def;
}

}  // namespace

const char* supported_architectures() noexcept {
  return "LlamaForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, "
         "Qwen2MoeForCausalLM, Qwen3_5MoeForConditionalGeneration, Qwen3_5MoeForCausalLM";
}

const json* quantization_config(const json& cfg) {
  const json* q = nullptr;
  if (cfg.is_object() && cfg.contains("quantization_config")) q = &cfg["quantization_config"];
  if (!q && cfg.is_object() && cfg.contains("text_config") && cfg["text_config"].is_object() &&
      cfg["text_config"].contains("quantization_config"))
    q = &cfg["text_config"]["quantization_config"];
  return q && !q->is_null() ? q : nullptr;
}

std::optional<std::string> quantized_by(const json& cfg) {
  const json* q = quantization_config(cfg);
  if (!q) return std::nullopt;
  const std::string method = q->is_object() ? text_or(*q, "quant_method", "unknown") : "unknown";
  if (method == "awq") return "awq";
  if (method == "gptq") return "gptq";
  if (method == "fp8" || method == "compressed-tensors") return "fp8";
  return method;
}

Result<HfConfig> read_config(const json& cfg, const std::string& file) {
  if (!cfg.is_object()) return error::invalid_argument(file + " is not a JSON object; it is not a model config");
  const auto arch_it = cfg.find("architectures");
  if (arch_it == cfg.end() || !arch_it->is_array() || arch_it->empty() || !(*arch_it)[0].is_string())
    return error::invalid_argument(file + " has no 'architectures' list; add the model class, e.g. [\"Qwen3ForCausalLM\"]");
  HfConfig c;
  c.hf_arch = (*arch_it)[0].get<std::string>();
  const ArchInfo* info = nullptr;
  for (const auto& a : kArchs)
    if (c.hf_arch == a.hf) info = &a;
  if (!info)
    return error::unsupported(file + ": architecture " + quoted_text(c.hf_arch) +
                              " is not one this reader maps (it reads " + supported_architectures() +
                              "); convert the checkpoint to GGUF with llama.cpp's convert_hf_to_gguf.py");
  c.arch = info->arch;
  c.permute_qk = info->permute_qk;
  // A multimodal model keeps the language model's settings in text_config and its tensors
  // under model.language_model.
  const bool nested = cfg.contains("text_config") && cfg["text_config"].is_object();
  const json& t = nested ? cfg["text_config"] : cfg;
  const std::string where = nested ? "text_config." : "";
  c.text_prefix = c.hf_arch.ends_with("ForConditionalGeneration") ? "model.language_model." : "model.";
  Fields f(t, file, where);
  const std::string p = c.arch + ".";
  auto& md = c.md;
  md.set("general.architecture", c.arch);
  if (auto n = cfg.find("_name_or_path"); n != cfg.end() && n->is_string() && !n->get<std::string>().empty())
    md.set("general.name", n->get<std::string>());
  md.set("general.source.architecture", c.hf_arch);

  const auto embd = f.integer("hidden_size", std::nullopt, 1, kMaxWidth);
  const auto layers = f.integer("num_hidden_layers", std::nullopt, 1, kMaxCount);
  const auto heads = f.integer("num_attention_heads", std::nullopt, 1, kMaxCount);
  const auto kv = f.integer("num_key_value_heads", heads, 1, kMaxCount);
  const auto ff = f.integer("intermediate_size", info->moe ? std::optional<int64_t>(0) : std::nullopt, 0, kMaxWidth);
  const auto vocab = f.integer("vocab_size", std::nullopt, 1, int64_t{1} << 31);
  const auto ctx = f.integer("max_position_embeddings", 4096, 1, int64_t{1} << 40);
  if (!f.status()) return f.status();
  if (!t.contains("head_dim") && *embd % *heads != 0)
    return error::invalid_argument(file + ": 'hidden_size' (" + std::to_string(*embd) +
                                   ") is not a multiple of 'num_attention_heads' (" + std::to_string(*heads) +
                                   "), so the head size needs 'head_dim'");
  const auto head_dim = f.integer("head_dim", *embd / *heads, 1, kMaxWidth);
  const auto eps = f.number("rms_norm_eps");
  // transformers v5 moves rope settings into rope_parameters.
  const json* rope = &t;
  if (auto rp = t.find("rope_parameters"); rp != t.end() && rp->is_object()) rope = &*rp;
  Fields rf(*rope, file, rope == &t ? where : where + "rope_parameters.");
  const double theta = rf.number("rope_theta").value_or(10000.0);
  const double partial = rf.number("partial_rotary_factor").value_or(f.number("partial_rotary_factor").value_or(1.0));
  if (!f.status()) return f.status();
  if (!rf.status()) return rf.status();
  c.n_layer = *layers;
  c.n_head = *heads;
  c.n_head_kv = *kv;
  c.head_dim = *head_dim;
  // The multimodal classes keep tie_word_embeddings at the top level.
  Fields top(cfg, file, "");
  c.tied = nested ? top.boolean("tie_word_embeddings").value_or(f.boolean("tie_word_embeddings").value_or(false))
                  : f.boolean("tie_word_embeddings").value_or(false);
  if (!top.status()) return top.status();

  // u32, as llama.cpp writes it (and requires: it refuses a wider integer here).
  md.set(p + "context_length", static_cast<uint32_t>(std::min<int64_t>(*ctx, UINT32_MAX)));
  md.set(p + "embedding_length", static_cast<uint32_t>(*embd));
  md.set(p + "block_count", static_cast<uint32_t>(*layers));
  md.set(p + "feed_forward_length", static_cast<uint32_t>(*ff));
  md.set(p + "attention.head_count", static_cast<uint32_t>(*heads));
  md.set(p + "attention.head_count_kv", static_cast<uint32_t>(*kv));
  md.set(p + "attention.key_length", static_cast<uint32_t>(*head_dim));
  md.set(p + "attention.value_length", static_cast<uint32_t>(*head_dim));
  if (eps) md.set(p + "attention.layer_norm_rms_epsilon", static_cast<float>(*eps));
  md.set(p + "rope.freq_base", static_cast<float>(theta));
  const auto n_rot = static_cast<int64_t>(std::llround(static_cast<double>(*head_dim) * partial));
  md.set(p + "rope.dimension_count", static_cast<uint32_t>(n_rot));
  md.set(p + "vocab_size", static_cast<uint32_t>(*vocab));

  // rope_scaling (v4) or rope_parameters.rope_type (v5).
  const json* rs = nullptr;
  if (auto it = t.find("rope_scaling"); it != t.end() && it->is_object()) rs = &*it;
  if (!rs && rope != &t) rs = rope;
  if (rs) {
    const std::string type = text_or(*rs, "rope_type", text_or(*rs, "type", "default"));
    if (type == "linear") {
      Fields sf(*rs, file, where + "rope_scaling.");
      const double factor = sf.number("factor").value_or(1.0);
      if (!sf.status()) return sf.status();
      md.set(p + "rope.scaling.type", std::string("linear"));
      md.set(p + "rope.scaling.factor", static_cast<float>(factor));
    } else if (type == "llama3" && c.arch == "llama") {
      Fields sf(*rs, file, where + (rope == &t ? "rope_scaling." : "rope_parameters."));
      Llama3Scaling l3;
      l3.factor = sf.number("factor").value_or(l3.factor);
      l3.low = sf.number("low_freq_factor").value_or(l3.low);
      l3.high = sf.number("high_freq_factor").value_or(l3.high);
      l3.old_ctx = sf.number("original_max_position_embeddings").value_or(l3.old_ctx);
      if (!sf.status()) return sf.status();
      if (l3.high <= l3.low)
        return error::invalid_argument(file + ": llama3 rope scaling needs high_freq_factor (" + std::to_string(l3.high) +
                                       ") above low_freq_factor (" + std::to_string(l3.low) + ")");
      c.rope_freqs = llama3_factors(l3, theta, n_rot);
    } else if (type != "default" && !(type == "mrope" && c.arch == "qwen35moe")) {
      // (Qwen3.5's sectioned "mrope" is plain neox rope for text: read_linear_attention.)
      return error::unsupported(file + ": rope scaling " + quoted_text(type) +
                                " is not supported: the engine computes only linear and llama3 scaling; remove "
                                "rope_scaling from config.json to run the model within the context it was trained on");
    }
  }

  if (info->moe) {
    const char* count_key = t.contains("num_local_experts") ? "num_local_experts" : "num_experts";
    const auto n_exp = f.integer(count_key, std::nullopt, 1, kMaxCount);
    const auto used = f.integer("num_experts_per_tok", std::nullopt, 1, kMaxCount);
    const auto exp_ff = f.integer("moe_intermediate_size", ff, 1, kMaxWidth);
    if (!f.status()) return f.status();
    if (*used > *n_exp)
      return error::invalid_argument(file + ": '" + where + "num_experts_per_tok' (" + std::to_string(*used) +
                                     ") exceeds '" + where + count_key + "' (" + std::to_string(*n_exp) + ")");
    c.n_expert = *n_exp;
    md.set(p + "expert_count", static_cast<uint32_t>(*n_exp));
    md.set(p + "expert_used_count", static_cast<uint32_t>(*used));
    md.set(p + "expert_feed_forward_length", static_cast<uint32_t>(*exp_ff));
    // The engine's Qwen3-MoE and Mixtral graphs renormalise the chosen experts' weights, as
    // transformers does with norm_topk_prob (Mixtral always does).
    // Qwen3.5's config class defaults the key to true, Qwen3-MoE's to false.
    if ((c.arch == "qwen3moe" || c.arch == "qwen35moe") &&
        !f.boolean("norm_topk_prob").value_or(c.arch == "qwen35moe"))
      return error::unsupported(file + ": '" + where + "norm_topk_prob' is false, but the engine's " + c.arch +
                                " graph always renormalises the chosen experts' weights; such a model is not "
                                "supported");
    // Qwen2-MoE (Qwen1.5-MoE): the engine's graph, as llama.cpp's, keeps the chosen experts'
    // softmax weights as they are, which is transformers' norm_topk_prob: false (its default),
    // and puts experts in every layer (decoder_sparse_step 1, no mlp_only_layers).
    if (c.arch == "qwen2moe") {
      if (f.boolean("norm_topk_prob").value_or(false))
        return error::unsupported(file + ": '" + where + "norm_topk_prob' is true, but the engine's qwen2moe graph "
                                  "does not renormalise the chosen experts' weights; such a model is not supported");
      const auto step = f.integer("decoder_sparse_step", 1, 1, kMaxCount);
      const auto it = t.find("mlp_only_layers");
      if (step && *step != 1)
        return error::unsupported(file + ": '" + where + "decoder_sparse_step' is " + std::to_string(*step) +
                                  "; the engine's qwen2moe graph has experts in every layer");
      if (it != t.end() && !(it->is_array() && it->empty()))
        return error::unsupported(file + ": '" + where + "mlp_only_layers' is not empty; the engine's qwen2moe graph "
                                  "has experts in every layer");
    }
    if (const auto sh = f.integer("shared_expert_intermediate_size", 0, 0, kMaxWidth); sh && *sh > 0)
      md.set(p + "expert_shared_feed_forward_length", static_cast<uint32_t>(*sh));
    if (!f.status()) return f.status();
    if (c.arch != "qwen2moe") md.set(p + "expert_weights_norm", true);
  }
  for (const json* j : {&t, &cfg}) {
    if (auto bos = j->find("bos_token_id"); bos != j->end() && bos->is_number_unsigned())
      md.set("general.source.bos_token_id", static_cast<uint32_t>(bos->get<uint64_t>()));
    if (auto eos = j->find("eos_token_id"); eos != j->end() && eos->is_number_unsigned())
      md.set("general.source.eos_token_id", static_cast<uint32_t>(eos->get<uint64_t>()));
    if (md.find("general.source.eos_token_id")) break;
  }
  if (c.arch == "qwen35moe")
    if (auto st = read_linear_attention(t, file, where, rs && rs->contains("mrope_section") ? *rs : *rope, c); !st)
      return st;
  if (!f.status()) return f.status();
  return c;
}

}  // namespace sy::hf
