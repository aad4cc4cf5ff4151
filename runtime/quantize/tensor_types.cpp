#include "quantize/tensor_types.hpp"

#include <cstdio>

namespace sy::quant_tool {
namespace {

using T = StorageType;

enum class Cat { output, token_embd, attn_v_like, attn_k, attn_q, attn_output, ffn_up, ffn_gate, ffn_down, other };

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

Cat category(const std::string& n) {
  if (n == "output.weight") return Cat::output;
  if (n == "token_embd.weight" || n == "per_layer_token_embd.weight") return Cat::token_embd;
  if (has(n, "attn_qkv.weight") || has(n, "attn_kv_b.weight") || has(n, "attn_v.weight")) return Cat::attn_v_like;
  if (has(n, "attn_k.weight")) return Cat::attn_k;
  if (has(n, "attn_q.weight")) return Cat::attn_q;
  if (has(n, "attn_output.weight")) return Cat::attn_output;
  if (has(n, "ffn_up")) return Cat::ffn_up;
  if (has(n, "ffn_gate")) return Cat::ffn_gate;
  if (has(n, "ffn_down")) return Cat::ffn_down;
  return Cat::other;
}

bool more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

int64_t block_of(T t) { return storage_type_info(t).block_size; }

}  // namespace

ModelFacts ModelFacts::from(const Metadata& md, const std::vector<TensorDesc>& tensors) {
  ModelFacts f;
  const std::string arch = md.get_string("general.architecture").value_or("");
  f.n_layer = md.get_int(arch + ".block_count").value_or(0);
  f.n_head = md.get_per_layer_int(arch + ".attention.head_count", 0).value_or(0);
  f.n_head_kv = md.get_per_layer_int(arch + ".attention.head_count_kv", 0).value_or(f.n_head);
  f.n_expert = md.get_int(arch + ".expert_count").value_or(0);
  for (const auto& t : tensors) f.has_output |= t.name == "output.weight";
  return f;
}

Result<TypeChooser> TypeChooser::create(const Recipe& r, const ModelFacts& facts, const std::vector<TensorDesc>& tensors,
                                        TypeOptions o) {
  TypeChooser c;
  c.recipe_ = r;
  c.facts_ = facts;
  for (const auto& [pattern, type] : o.overrides) {
    try {
      c.patterns_.emplace_back(std::regex(pattern), type);
    } catch (const std::regex_error& e) {
      return error::invalid_argument("--tensor-type " + pattern + ": not a valid regular expression (" + e.what() + ")");
    }
  }
  c.opts_ = std::move(o);
  for (const auto& t : tensors) c.n_attn_v_ += category(t.name) == Cat::attn_v_like;
  return c;
}

bool TypeChooser::quantizable(const TensorDesc& t) const {
  const std::string& n = t.name;
  if (t.shape.size() < 2 || n.size() < 6 || n.compare(n.size() - 6, 6, "weight") != 0) return false;
  if (has(n, "_norm.weight") || has(n, "ffn_gate_inp.weight") || has(n, "ssm_conv1d")) return false;
  if (opts_.leave_output && n == "output.weight") return false;
  return true;
}

StorageType TypeChooser::next(const TensorDesc& t) {
  const Cat cat = category(t.name);
  if (!quantizable(t)) return t.type;
  if (opts_.token_embd_type && cat == Cat::token_embd) return *opts_.token_embd_type;
  if (opts_.output_type && cat == Cat::output) return *opts_.output_type;
  T type = recipe_.base;
  if (!recipe_.quantized()) return type;
  bool manual = false;
  for (const auto& [re, forced] : patterns_)
    if (std::regex_search(t.name, re)) {
      type = forced;
      manual = true;
      break;
    }
  if (!manual && !opts_.pure) {
    type = rules(t, type);
  } else {
    i_attn_v_ += cat == Cat::attn_v_like;
    i_ffn_down_ += cat == Cat::ffn_down;
  }
  return fit(t, type);
}

StorageType TypeChooser::rules(const TensorDesc& t, StorageType type) {
  const Cat cat = category(t.name);
  const Mix m = recipe_.mix;
  const int64_t gqa = facts_.n_head_kv > 0 ? facts_.n_head / facts_.n_head_kv : 1;
  const bool eight_experts = facts_.n_expert == 8;
  if (cat == Cat::output || (!facts_.has_output && cat == Cat::token_embd)) {
    if (t.shape[0] % block_of(type) != 0) return T::Q8_0;
    return type == T::Q8_0 ? type : T::Q6_K;
  }
  if (cat == Cat::token_embd) return type;
  if (cat == Cat::attn_v_like) {
    const int64_t i = i_attn_v_++;
    if (m == Mix::q2_k) type = gqa >= 4 ? T::Q4_K : T::Q3_K;
    else if (m == Mix::q3_k_m) type = i < 2 ? T::Q5_K : T::Q4_K;
    else if (m == Mix::q3_k_l) type = T::Q5_K;
    else if (recipe_.base == T::IQ4_NL || recipe_.base == T::IQ4_XS) type = gqa >= 4 ? T::Q5_K : type;
    else if ((m == Mix::q4_k_m || m == Mix::q5_k_m) && more_bits(i, n_attn_v_)) type = T::Q6_K;
    else if (m == Mix::q4_k_s && i < 4) type = T::Q5_K;
    if (eight_experts) type = T::Q8_0;
    return type;
  }
  if (cat == Cat::attn_k) return eight_experts ? T::Q8_0 : type;
  if (cat == Cat::ffn_down) {
    int64_t layer = i_ffn_down_++;
    // In MoE models the layer comes from the name: experts and shared experts are separate tensors.
    if (facts_.n_expert > 1) {
      int parsed = -1;
      if (std::sscanf(t.name.c_str(), "blk.%d.", &parsed) == 1) layer = parsed;
    }
    const int64_t n = facts_.n_layer;
    if (m == Mix::q2_k) type = T::Q3_K;
    else if (m == Mix::q3_k_m) type = layer < n / 16 ? T::Q5_K : T::Q4_K;
    else if (m == Mix::q3_k_l) type = T::Q5_K;
    else if (m == Mix::q4_k_m && more_bits(layer, n)) type = T::Q6_K;
    else if ((recipe_.base == T::IQ4_NL || recipe_.base == T::IQ4_XS) && layer < n / 8) type = T::Q5_K;
    else if (m == Mix::q5_k_m && more_bits(layer, n)) type = T::Q6_K;
    else if (m == Mix::q4_k_s && layer < n / 8) type = T::Q5_K;
    return type;
  }
  if (cat == Cat::attn_output) {
    if (eight_experts) {
      if (m == Mix::q2_k || m == Mix::q3_k_s || m == Mix::q3_k_m || m == Mix::q4_k_s || m == Mix::q4_k_m ||
          recipe_.base == T::IQ4_NL || recipe_.base == T::IQ4_XS)
        type = T::Q5_K;
    } else {
      if (m == Mix::q2_k) type = T::Q3_K;
      else if (m == Mix::q3_k_m) type = T::Q4_K;
      else if (m == Mix::q3_k_l) type = T::Q5_K;
    }
    return type;
  }
  return type;
}

StorageType TypeChooser::fit(const TensorDesc& t, StorageType type) {
  const int64_t row = t.shape[0];
  if (row % block_of(type) == 0) return type;
  T to = type;
  switch (type) {
    case T::Q2_K: case T::Q3_K: to = T::Q4_0; break;
    case T::IQ4_XS: to = T::IQ4_NL; break;
    case T::Q4_K: to = T::Q5_0; break;
    case T::Q5_K: to = T::Q5_1; break;
    case T::Q6_K: to = T::Q8_0; break;
    default: break;
  }
  if (row % block_of(to) != 0) to = T::F16;
  fallbacks_.push_back(t.name + ": rows of " + std::to_string(row) + " do not fill " +
                       std::string(storage_type_name(type)) + " blocks; " + std::string(storage_type_name(to)) + " instead");
  return to;
}

}  // namespace sy::quant_tool
