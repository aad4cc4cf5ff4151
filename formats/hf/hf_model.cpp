#include "hf_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "extras.hpp"
#include "names.hpp"
#include "names_text.hpp"
#include "qwen35.hpp"
#include "switchyard/quant.hpp"

namespace sy::hf {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kMaxConfigBytes = 16ull << 20;

std::vector<int64_t> gguf_order(const std::vector<int64_t>& hf) { return {hf.rbegin(), hf.rend()}; }

uint64_t elements(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The name of expert e's tensor, from another expert's name ("...experts.3.w1.weight").
std::string expert_name(const std::string& other, int64_t other_e, int64_t e) {
  const std::string from = ".experts." + std::to_string(other_e) + ".";
  const auto at = other.find(from);
  if (at == std::string::npos) return other;
  return other.substr(0, at) + ".experts." + std::to_string(e) + "." + other.substr(at + from.size());
}

// `quantized`: a quantized reader is decoding the checkpoint, and its scheme did not claim t.
Status refuse_dtype(const std::string& file, const StTensor& t, bool quantized) {
  const std::string who = file + ": tensor " + quoted_text(t.name) + " is " + dtype_name(t.dtype);
  const bool fp8 = t.dtype == Dtype::F8_E4M3 || t.dtype == Dtype::F8_E5M2;
  if (fp8 && quantized)
    return error::unsupported(who + " but is not a linear's '.weight' with its scale beside it, the layout the fp8 "
                                    "plugin decodes; FP8 fused expert tensors (transformers v5 'gate_up_proj', "
                                    "'down_proj') are not supported yet: use a checkpoint with one linear per expert");
  if (fp8)
    return error::unsupported(who + ", an FP8-quantized weight; the fp8 format plugin reads such checkpoints "
                                    "(model.format: fp8), this reader only unquantized F32, F16 and BF16 ones");
  return error::unsupported(who + "; this reader maps unquantized F32, F16 and BF16 weights (packed integer weights "
                                  "are AWQ or GPTQ checkpoints, read by the awq and gptq format plugins)");
}

// Byte ranges that read t with its value heads tiled (qwen35.hpp): whole rows moved, or
// runs of columns inside each row; neighbouring ranges are merged.
Result<std::vector<Model::Piece>> tiled_pieces(const StTensor& t, uint32_t shard, const Mapped& m, const HfConfig& c,
                                               const std::string& file) {
  const bool rows = m.heads == ValueHeads::rows;
  const int64_t n = rows ? t.shape[0] : (t.shape.size() == 2 ? t.shape[1] : -1);
  const int64_t want = (rows ? m.heads_first : 0) + c.lin_v_heads * m.heads_per_head;
  if (n != want)
    return error::corrupt(file + ": tensor " + quoted_text(t.name) + " has shape " + shape_text(t.shape) + ", but " +
                          std::to_string(c.lin_v_heads) + " value heads of " + std::to_string(c.lin_head_dim) +
                          " (config.json) need " + std::to_string(want) + (rows ? " rows" : " columns") +
                          "; the config does not belong to these weights");
  const auto src = tiled_value_rows(n, rows ? m.heads_first : 0, m.heads_per_head, c.lin_k_heads, c.lin_v_heads);
  const uint64_t unit = rows ? t.bytes / static_cast<uint64_t>(n) : dtype_size(t.dtype);
  const int64_t outer = rows ? 1 : t.shape[0];
  std::vector<Model::Piece> out;
  for (int64_t r = 0; r < outer; ++r)
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t at = t.begin + (static_cast<uint64_t>(r * n) + static_cast<uint64_t>(src[static_cast<size_t>(i)])) * unit;
      if (!out.empty() && out.back().begin + out.back().bytes == at) {
        out.back().bytes += unit;
      } else {
        out.push_back({shard, at, unit});
      }
    }
  return out;
}

// The same tiling for a decoded quantized linear: its rows are whole blocks, so rows move
// as they are; columns cannot (they share groups), so the activation is gathered instead:
// the linear's input order (act-order's, or the identity) is composed with the tiling.
Status tile_value_heads(DecodedLinear& d, const Mapped& m, const HfConfig& c, const std::string& module) {
  const bool rows = m.heads == ValueHeads::rows;
  const int64_t n = rows ? d.rows : d.cols;
  const int64_t want = (rows ? m.heads_first : 0) + c.lin_v_heads * m.heads_per_head;
  if (n != want)
    return error::corrupt("the quantized linear " + quoted_text(module) + " has " + std::to_string(n) +
                          (rows ? " output rows" : " input columns") + ", but " + std::to_string(c.lin_v_heads) +
                          " value heads of " + std::to_string(c.lin_head_dim) + " (config.json) need " +
                          std::to_string(want) + "; the config does not belong to these weights");
  const auto src = tiled_value_rows(n, rows ? m.heads_first : 0, m.heads_per_head, c.lin_k_heads, c.lin_v_heads);
  if (rows) {
    const uint64_t row_bytes = d.bytes.size() / static_cast<uint64_t>(d.rows);
    std::vector<std::byte> out(d.bytes.size());
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out.data() + static_cast<uint64_t>(i) * row_bytes,
                  d.bytes.data() + static_cast<uint64_t>(src[static_cast<size_t>(i)]) * row_bytes, row_bytes);
    d.bytes = std::move(out);
    return Status::ok();
  }
  // Checkpoint column j reads value feature j in grouped order, which the engine computes at
  // tiled position at[j].
  std::vector<int32_t> at(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) at[static_cast<size_t>(src[static_cast<size_t>(i)])] = static_cast<int32_t>(i);
  if (d.input_order.empty()) {
    d.input_order = at;
  } else {
    for (auto& o : d.input_order) o = at[static_cast<size_t>(o)];
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Model>> Model::open(const fs::path& path, const QuantReader* quant) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(path, ec) ? path : path.parent_path();
  const fs::path cfg_path = dir / "config.json";
  if (!fs::exists(cfg_path, ec))
    return error::not_found(dir.string() + " has no config.json; a Hugging Face model folder needs it to know the "
                            "architecture (download it with the weights)");
  auto text = read_text_file(cfg_path, kMaxConfigBytes);
  if (!text) return text.status();
  nlohmann::json cfg;
  try {
    cfg = nlohmann::json::parse(*text);
  } catch (const std::exception& e) {
    return error::corrupt(cfg_path.string() + " is not valid JSON (" + quoted_text(e.what(), 200) +
                          "); download it again");
  }
  const auto method = quantized_by(cfg);
  if (quant && !method)
    return error::unsupported(dir.string() + " is not a quantized checkpoint (config.json has no quantization_config); "
                              "the hf format reads it (model.format: hf), not " + quant->method);
  if (quant && *method != quant->method)
    return error::unsupported(dir.string() + " is a " + *method + " checkpoint (config.json's quantization_config), "
                              "which the " + *method + " format plugin reads (model.format: " + *method + "), not " +
                              quant->method);
  if (const auto& q = method; q && !quant)
    return error::unsupported(dir.string() + " is a quantized checkpoint (config.json has a quantization_config, "
                              "quant_method " + quoted_text(*q) + "); the " + *q +
                              " format plugin reads it (model.format: " + *q +
                              "), not hf, which reads unquantized F32/F16/BF16 checkpoints");
  auto c = read_config(cfg, cfg_path.string());
  if (!c) return c.status();
  auto ck = open_checkpoint(path);
  if (!ck) return ck.status();
  std::unique_ptr<Model> m(new Model());
  if (quant) {
    auto scheme = quant->make(*quantization_config(cfg), cfg_path.string());
    if (!scheme) return scheme.status();
    m->scheme_ = std::move(*scheme);
  }
  m->config_ = std::move(*c);
  m->ckpt_ = std::move(*ck);
  if (auto st = m->build(cfg_path.string()); !st) return st;
  if (m->scheme_) release_pages(m->ckpt_);
  if (auto st = add_folder_metadata(dir, m->config_.md); !st) return st;
  return m;
}

Status Model::add(TensorDesc d, Recipe r) {
  for (const auto& e : descs_)
    if (e.name == d.name)
      return error::corrupt("two tensors of the checkpoint map to " + d.name + "; the checkpoint holds one of them twice");
  descs_.push_back(std::move(d));
  recipes_.push_back(std::move(r));
  return Status::ok();
}

Status Model::build(const std::string& config_file) {
  struct Stack {
    size_t desc = 0;
    std::vector<const Checkpoint::Entry*> parts;
  };
  std::map<std::string, Stack> stacks;
  std::map<std::string, int64_t> skipped;
  std::map<std::string, QuantStack> qstacks;
  for (const auto& e : ckpt_.tensors) {
    const StTensor& t = *e.tensor;
    const std::string file = ckpt_.shards[e.shard]->path().string();
    if (scheme_ && scheme_->companion(t)) continue;
    if (const std::string module = scheme_ ? scheme_->module_of(t) : std::string(); !module.empty()) {
      if (auto st = add_quantized(module, config_file, qstacks, skipped); !st) return st;
      continue;
    }
    const Mapped m = map_name(t.name, config_);
    if (m.action == Action::skip) {
      ++skipped[m.name];
      continue;
    }
    if (m.action == Action::unknown)
      return error::unsupported(file + ": tensor " + quoted_text(t.name) + " is not part of a " + config_.hf_arch +
                                " language model as this reader knows it, and leaving it out could change the "
                                "model's output; check that " + config_file + " names the right architecture");
    const auto type = storage_of(t.dtype);
    if (!type) return refuse_dtype(file, t, scheme_ != nullptr);
    if (t.shape.empty() || t.shape.size() > 3)
      return error::unsupported(file + ": tensor " + quoted_text(t.name) + " has shape " + shape_text(t.shape) +
                                "; a weight of this model has 1 to 3 dimensions");
    const Piece whole{e.shard, t.begin, t.bytes};
    // Norms, biases and the router become F32 (permuted biases too); matrices keep their type.
    const bool permuted = m.action == Action::permute_q || m.action == Action::permute_k;
    // Values computed on the way (Qwen3.5's norms and A_log) go through F32 whatever the source.
    const bool widen = ((m.action == Action::to_f32 || (permuted && t.shape.size() == 1)) && t.dtype != Dtype::F32) ||
                       m.values != Values::as_is;
    const StorageType out_type = widen ? StorageType::F32 : *type;
    const uint64_t out_bytes = widen ? elements(t.shape) * 4 : t.bytes;
    switch (m.action) {
      case Action::copy:
      case Action::to_f32: {
        auto shape = gguf_order(t.shape);
        if (m.squeeze) {
          std::erase(shape, int64_t{1});
          if (shape.empty()) shape.push_back(1);
        }
        Recipe r{{whole}, t.dtype, widen, {}, m.values};
        if (m.heads != ValueHeads::none) {
          auto pieces = tiled_pieces(t, e.shard, m, config_, file);
          if (!pieces) return pieces.status();
          r.pieces = std::move(*pieces);
        }
        if (auto st = add({m.name, std::move(shape), out_type, out_bytes}, std::move(r)); !st) return st;
        break;
      }
      case Action::permute_q:
      case Action::permute_k: {
        // Row h*hd + 2i + j of the result is row h*hd + j*hd/2 + i of the checkpoint: each
        // head's two rotated halves interleaved into adjacent pairs.
        const int64_t heads = m.action == Action::permute_q ? config_.n_head : config_.n_head_kv;
        const int64_t hd = config_.head_dim, rows = t.shape[0];
        if (rows != heads * hd || hd % 2 != 0)
          return error::corrupt(file + ": tensor " + quoted_text(t.name) + " has " + std::to_string(rows) +
                                " rows, but " + config_file + " gives " + std::to_string(heads) + " heads of " +
                                std::to_string(hd) + "; the config does not belong to these weights");
        const uint64_t row_bytes = t.bytes / static_cast<uint64_t>(rows);
        Recipe r{{}, t.dtype, widen, {}, Values::as_is};
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t i = 0; i < hd / 2; ++i)
            for (int64_t j = 0; j < 2; ++j)
              r.pieces.push_back({e.shard, t.begin + static_cast<uint64_t>(h * hd + j * (hd / 2) + i) * row_bytes, row_bytes});
        if (auto st = add({m.name, gguf_order(t.shape), out_type, out_bytes}, std::move(r)); !st) return st;
        break;
      }
      case Action::expert: {
        if (m.expert >= config_.n_expert)
          return error::corrupt(file + ": tensor " + quoted_text(t.name) + " belongs to expert " +
                                std::to_string(m.expert) + ", but " + config_file + " gives " +
                                std::to_string(config_.n_expert) + " experts; the config does not belong to these weights");
        auto [it, fresh] = stacks.try_emplace(m.name);
        if (fresh) {
          it->second.desc = descs_.size();
          it->second.parts.assign(static_cast<size_t>(config_.n_expert), nullptr);
          if (auto st = add({m.name, {}, *type, 0}, {}); !st) return st;  // filled in below, in this position
        }
        auto& slot = it->second.parts[static_cast<size_t>(m.expert)];
        if (slot) return error::corrupt(file + ": two tensors map to expert " + std::to_string(m.expert) + " of " + m.name);
        slot = &e;
        break;
      }
      default:
        break;
    }
  }
  for (auto& [name, s] : stacks) {
    const Checkpoint::Entry* first = nullptr;
    int64_t first_e = 0;
    for (size_t k = 0; k < s.parts.size() && !first; ++k)
      if (s.parts[k]) first = s.parts[k], first_e = static_cast<int64_t>(k);
    const StTensor& f = *first->tensor;
    Recipe r{{}, f.dtype, false, {}, Values::as_is};
    for (size_t k = 0; k < s.parts.size(); ++k) {
      const auto* p = s.parts[k];
      if (!p)
        return error::corrupt("the checkpoint in " + ckpt_.dir.string() + " lacks expert " + std::to_string(k) +
                              " of " + name + " (" + quoted_text(expert_name(f.name, first_e, static_cast<int64_t>(k))) +
                              "), while " + config_file + " gives " + std::to_string(config_.n_expert) +
                              " experts; the download is incomplete");
      if (p->tensor->dtype != f.dtype || p->tensor->shape != f.shape)
        return error::corrupt(quoted_text(p->tensor->name) + " is " + dtype_name(p->tensor->dtype) + " " +
                              shape_text(p->tensor->shape) + " but " + quoted_text(f.name) + " is " +
                              dtype_name(f.dtype) + " " + shape_text(f.shape) +
                              "; the experts of one layer must share type and shape");
      r.pieces.push_back({p->shard, p->tensor->begin, p->tensor->bytes});
    }
    auto& d = descs_[s.desc];
    d.shape = gguf_order(f.shape);
    d.shape.push_back(config_.n_expert);
    d.bytes = f.bytes * static_cast<uint64_t>(config_.n_expert);
    recipes_[s.desc] = std::move(r);
  }
  if (auto st = stack_quantized(qstacks, config_file); !st) return st;
  if (!config_.rope_freqs.empty()) {
    Recipe r;
    r.owned.resize(config_.rope_freqs.size() * sizeof(float));
    std::memcpy(r.owned.data(), config_.rope_freqs.data(), r.owned.size());
    const auto n = static_cast<int64_t>(config_.rope_freqs.size());
    const uint64_t bytes = r.owned.size();  // before r is moved from
    if (auto st = add({"rope_freqs.weight", {n}, StorageType::F32, bytes}, std::move(r)); !st) return st;
  }
  if (!skipped.empty()) {
    std::string note;
    for (const auto& [what, n] : skipped)
      note += (note.empty() ? "" : ", ") + std::to_string(n) + " " + what + " tensor" + (n == 1 ? "" : "s");
    config_.md.set("general.source.skipped", note + " not loaded (the engine runs the language model only)");
  }
  return Status::ok();
}

Status Model::add_quantized(const std::string& module, const std::string& config_file,
                            std::map<std::string, QuantStack>& stacks, std::map<std::string, int64_t>& skipped) {
  const Mapped m = map_name(module + ".weight", config_);
  if (m.action == Action::skip) {
    ++skipped[m.name];
    return Status::ok();
  }
  if (m.action == Action::unknown || m.action == Action::to_f32 || m.values != Values::as_is)
    return error::unsupported("the quantized linear " + quoted_text(module) + " is not part of a " + config_.hf_arch +
                              " language model as this reader knows it; check that " + config_file +
                              " names the right architecture");
  const TensorFinder finder(ckpt_);
  auto decoded = scheme_->decode(finder, module);
  if (!decoded) return decoded.status();
  finder.release_found();
  DecodedLinear d = std::move(*decoded);
  const uint64_t row_bytes = d.rows > 0 ? d.bytes.size() / static_cast<uint64_t>(d.rows) : 0;
  if (m.action == Action::permute_q || m.action == Action::permute_k) {
    // The same row order as the unquantized case (see build()); a row is whole blocks.
    const int64_t heads = m.action == Action::permute_q ? config_.n_head : config_.n_head_kv;
    const int64_t hd = config_.head_dim;
    if (d.rows != heads * hd || hd % 2 != 0)
      return error::corrupt(quoted_text(module) + " has " + std::to_string(d.rows) + " output rows, but " + config_file +
                            " gives " + std::to_string(heads) + " heads of " + std::to_string(hd) +
                            "; the config does not belong to these weights");
    std::vector<std::byte> out(d.bytes.size());
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < hd / 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
          std::memcpy(out.data() + static_cast<uint64_t>(h * hd + 2 * i + j) * row_bytes,
                      d.bytes.data() + static_cast<uint64_t>(h * hd + j * (hd / 2) + i) * row_bytes, row_bytes);
    d.bytes = std::move(out);
  }
  if (m.heads != ValueHeads::none)
    if (auto st = tile_value_heads(d, m, config_, module); !st) return st;
  if (m.action != Action::expert) {
    const uint64_t bytes = d.bytes.size();
    Recipe r;
    r.owned = std::move(d.bytes);
    if (auto st = add({m.name, {d.cols, d.rows}, d.type, bytes}, std::move(r)); !st) return st;
    if (auto st = add_input_order(m.name, d.input_order); !st) return st;
    return d.input_scale > 0 ? add_input_scale(m.name, {d.input_scale}) : Status::ok();
  }
  if (m.expert >= config_.n_expert)
    return error::corrupt("the quantized linear " + quoted_text(module) + " belongs to expert " +
                          std::to_string(m.expert) + ", but " + config_file + " gives " +
                          std::to_string(config_.n_expert) + " experts; the config does not belong to these weights");
  auto [it, fresh] = stacks.try_emplace(m.name);
  if (fresh) {
    it->second.desc = descs_.size();
    it->second.parts.resize(static_cast<size_t>(config_.n_expert));
    if (auto st = add({m.name, {}, d.type, 0}, {}); !st) return st;  // filled in by stack_quantized()
  }
  auto& slot = it->second.parts[static_cast<size_t>(m.expert)];
  if (slot.rows != 0) return error::corrupt("two quantized linears map to expert " + std::to_string(m.expert) + " of " + m.name);
  slot = std::move(d);
  return Status::ok();
}

Status Model::stack_quantized(std::map<std::string, QuantStack>& stacks, const std::string& config_file) {
  for (auto& [name, s] : stacks) {
    const DecodedLinear* first = nullptr;
    for (const auto& p : s.parts)
      if (p.rows != 0 && !first) first = &p;
    Recipe r;
    r.owned.reserve(first->bytes.size() * s.parts.size());
    for (size_t k = 0; k < s.parts.size(); ++k) {
      const DecodedLinear& p = s.parts[k];
      if (p.rows == 0)
        return error::corrupt("the checkpoint in " + ckpt_.dir.string() + " lacks expert " + std::to_string(k) + " of " +
                              name + ", while " + config_file + " gives " + std::to_string(config_.n_expert) +
                              " experts; the download is incomplete");
      if (p.type != first->type || p.rows != first->rows || p.cols != first->cols)
        return error::corrupt("expert " + std::to_string(k) + " of " + name + " is " + std::to_string(p.rows) + " x " +
                              std::to_string(p.cols) + " " + std::string(storage_type_name(p.type)) + ", another is " +
                              std::to_string(first->rows) + " x " + std::to_string(first->cols) + " " +
                              std::string(storage_type_name(first->type)) +
                              "; the experts of one layer must share type and shape");
      r.owned.insert(r.owned.end(), p.bytes.begin(), p.bytes.end());
      s.parts[k].bytes = {};  // the stacked copy replaces it
    }
    auto& d = descs_[s.desc];
    d.shape = {first->cols, first->rows, config_.n_expert};
    d.type = first->type;
    d.bytes = r.owned.size();
    recipes_[s.desc] = std::move(r);
    // One gather serves every expert only when they share the order (act-order experts with
    // orders of their own would need a gather per expert inside matmul_id).
    for (const auto& p : s.parts)
      if (p.input_order != first->input_order)
        return error::unsupported("the experts of " + name + " were quantized with act-order (desc_act), each with "
                                  "its own column order; Switchyard gathers one order per layer, so per-expert orders "
                                  "are planned (requantize the experts with desc_act false)");
    if (auto st = add_input_order(name, first->input_order); !st) return st;
    // One scale per expert, [E]: the engine uses the largest for the layer's shared input,
    // as vLLM's fused MoE does (docs/formats.md).
    std::vector<float> scales;
    for (size_t k = 0; k < s.parts.size(); ++k) {
      if ((s.parts[k].input_scale > 0) != (first->input_scale > 0))
        return error::corrupt("expert " + std::to_string(k) + " of " + name + (first->input_scale > 0 ? " lacks" : " has") +
                              " an activation scale (input_scale) that another expert " +
                              (first->input_scale > 0 ? "has" : "lacks") +
                              "; the experts of one layer are quantized alike, so the checkpoint is damaged");
      scales.push_back(s.parts[k].input_scale);
    }
    if (first->input_scale > 0)
      if (auto st = add_input_scale(name, scales); !st) return st;
  }
  return Status::ok();
}

Status Model::add_input_order(const std::string& weight, const std::vector<int32_t>& order) {
  if (order.empty()) return Status::ok();
  const std::string base = weight.size() > 7 && weight.compare(weight.size() - 7, 7, ".weight") == 0
                               ? weight.substr(0, weight.size() - 7) : weight;
  Recipe r;
  r.owned.resize(order.size() * sizeof(int32_t));
  std::memcpy(r.owned.data(), order.data(), r.owned.size());
  const uint64_t bytes = r.owned.size();
  return add({base + ".input_order", {static_cast<int64_t>(order.size())}, StorageType::I32, bytes}, std::move(r));
}

Status Model::add_input_scale(const std::string& weight, const std::vector<float>& scales) {
  const std::string base = weight.size() > 7 && weight.compare(weight.size() - 7, 7, ".weight") == 0
                               ? weight.substr(0, weight.size() - 7) : weight;
  Recipe r;
  r.owned.resize(scales.size() * sizeof(float));
  std::memcpy(r.owned.data(), scales.data(), r.owned.size());
  const uint64_t bytes = r.owned.size();
  return add({base + ".input_scale", {static_cast<int64_t>(scales.size())}, StorageType::F32, bytes}, std::move(r));
}

Result<std::span<const std::byte>> Model::view(size_t index) const noexcept {
  if (index >= descs_.size()) return error::invalid_argument("no tensor with index " + std::to_string(index));
  const Recipe& r = recipes_[index];
  if (!r.owned.empty()) return std::span<const std::byte>(r.owned);
  if (r.to_f32 || r.pieces.size() != 1)
    return error::unsupported("tensor " + descs_[index].name + " is assembled from the checkpoint (" +
                              (r.to_f32 ? std::string("converted to F32") : std::to_string(r.pieces.size()) + " pieces") +
                              "), so it cannot be mapped; read() copies it");
  const Piece& p = r.pieces.front();
  const auto bytes = ckpt_.shards[p.shard]->bytes().subspan(static_cast<size_t>(p.begin), static_cast<size_t>(p.bytes));
  // Kernels read elements through typed pointers: a misaligned one is copied instead.
  if (reinterpret_cast<uintptr_t>(bytes.data()) % dtype_size(r.src) != 0)
    return error::unsupported("tensor " + descs_[index].name + " is not aligned to its element size in the file; "
                              "read() copies it");
  return bytes;
}

Status Model::read(size_t index, uint64_t offset, std::span<std::byte> out) const noexcept {
  if (index >= descs_.size()) return error::invalid_argument("no tensor with index " + std::to_string(index));
  const TensorDesc& d = descs_[index];
  if (offset > d.bytes || out.size() > d.bytes - offset)
    return error::invalid_argument("read of " + std::to_string(out.size()) + " bytes at offset " +
                                   std::to_string(offset) + " is outside tensor '" + d.name + "'");
  const Recipe& r = recipes_[index];
  if (!r.owned.empty()) {
    std::memcpy(out.data(), r.owned.data() + offset, out.size());
    return Status::ok();
  }
  // Copies source bytes [from, from + n) of the recipe, walking its pieces.
  const auto copy_source = [&](uint64_t from, std::byte* dst, uint64_t n) {
    for (const Piece& p : r.pieces) {
      if (n == 0) break;
      if (from >= p.bytes) {
        from -= p.bytes;
        continue;
      }
      const uint64_t take = std::min(n, p.bytes - from);
      std::memcpy(dst, ckpt_.shards[p.shard]->bytes().data() + p.begin + from, static_cast<size_t>(take));
      dst += take, n -= take, from = 0;
    }
  };
  if (!r.to_f32) {
    copy_source(offset, out.data(), out.size());
    return Status::ok();
  }
  try {
    const uint64_t es = dtype_size(r.src);
    const uint64_t e0 = offset / 4, e1 = (offset + out.size() + 3) / 4;
    std::vector<std::byte> src(static_cast<size_t>((e1 - e0) * es));
    copy_source(e0 * es, src.data(), src.size());
    std::vector<float> f(static_cast<size_t>(e1 - e0));
    for (size_t k = 0; k < f.size(); ++k) {
      if (r.src == Dtype::F32) {
        std::memcpy(&f[k], src.data() + k * es, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, src.data() + k * es, 2);
        f[k] = r.src == Dtype::BF16 ? bf16_to_fp32(h) : fp16_to_fp32(h);
      }
      if (r.values == Values::plus_one) f[k] += 1.0f;
      if (r.values == Values::neg_exp) f[k] = -std::exp(f[k]);
    }
    std::memcpy(out.data(), reinterpret_cast<const std::byte*>(f.data()) + (offset - e0 * 4), out.size());
  } catch (const std::bad_alloc&) {
    return error::out_of_memory("converting tensor " + d.name + " to F32 ran out of memory");
  }
  return Status::ok();
}

}  // namespace sy::hf
