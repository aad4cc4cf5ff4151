#include "qwen35.hpp"

#include "config_fields.hpp"

namespace sy::hf {

using nlohmann::json;

Status read_linear_attention(const json& t, const std::string& file, const std::string& where, const json& rope,
                             HfConfig& c) {
  Fields f(t, file, where);
  const auto kernel = f.integer("linear_conv_kernel_dim", std::nullopt, 2, 1024);
  const auto k_dim = f.integer("linear_key_head_dim", std::nullopt, 1, 4096);
  const auto v_dim = f.integer("linear_value_head_dim", k_dim, 1, 4096);
  const auto k_heads = f.integer("linear_num_key_heads", std::nullopt, 1, kMaxCount);
  const auto v_heads = f.integer("linear_num_value_heads", k_heads, 1, kMaxCount);
  const auto interval = f.integer("full_attention_interval", 4, 1, kMaxCount);
  const auto mtp = f.integer("mtp_num_hidden_layers", 0, 0, kMaxCount);
  const auto gate = f.boolean("attn_output_gate");
  if (!f.status()) return f.status();
  if (*k_dim != *v_dim)
    return error::unsupported(file + ": '" + where + "linear_key_head_dim' (" + std::to_string(*k_dim) + ") and '" +
                              where + "linear_value_head_dim' (" + std::to_string(*v_dim) +
                              ") differ; the engine's delta-net state needs them equal, as in every Qwen3.5/3.6 model");
  if (*v_heads % *k_heads != 0)
    return error::invalid_argument(file + ": '" + where + "linear_num_value_heads' (" + std::to_string(*v_heads) +
                                   ") must be a multiple of '" + where + "linear_num_key_heads' (" +
                                   std::to_string(*k_heads) + ")");
  if (gate && !*gate)
    return error::unsupported(file + ": '" + where + "attn_output_gate' is false, but the engine's qwen35moe graph "
                              "gates every full-attention output, as the published models do");
  // The engine places full attention in every interval-th layer; a layer_types list that
  // says otherwise would run the wrong kind of layer.
  if (auto lt = t.find("layer_types"); lt != t.end() && lt->is_array()) {
    if (static_cast<int64_t>(lt->size()) != c.n_layer)
      return error::invalid_argument(file + ": '" + where + "layer_types' lists " + std::to_string(lt->size()) +
                                     " layers, but '" + where + "num_hidden_layers' is " + std::to_string(c.n_layer));
    for (int64_t il = 0; il < c.n_layer; ++il) {
      const json& v = (*lt)[static_cast<size_t>(il)];
      const bool full = (il + 1) % *interval == 0;
      const char* want = full ? "full_attention" : "linear_attention";
      if (!v.is_string() || v.get<std::string>() != want)
        return error::unsupported(file + ": '" + where + "layer_types[" + std::to_string(il) + "]' is " +
                                  quoted_text(v.dump(), 40) + ", but with full_attention_interval " +
                                  std::to_string(*interval) + " layer " + std::to_string(il) + " is " + want +
                                  "; the engine supports only that regular pattern");
    }
  }
  // Sectioned (multimodal) rope: for text it equals plain neox rope on the rotated dims,
  // but the key is kept as llama.cpp's converter writes it (default [11, 11, 10]).
  MetaArray sections{MetaType::i32, {}};
  if (auto ms = rope.find("mrope_section"); ms != rope.end() && ms->is_array()) {
    for (const auto& v : *ms) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxWidth)
        return error::invalid_argument(file + ": 'mrope_section' holds " + quoted_text(v.dump(), 40) +
                                       "; it must list counts of rotated pairs");
      if (sections.items.size() < 4) sections.items.emplace_back(static_cast<int32_t>(v.get<int64_t>()));
    }
  } else {
    for (int32_t v : {11, 11, 10}) sections.items.emplace_back(v);
  }
  while (sections.items.size() < 4) sections.items.emplace_back(int32_t{0});

  const std::string p = c.arch + ".";
  auto& md = c.md;
  md.set(p + "ssm.conv_kernel", static_cast<uint32_t>(*kernel));
  md.set(p + "ssm.state_size", static_cast<uint32_t>(*k_dim));
  md.set(p + "ssm.group_count", static_cast<uint32_t>(*k_heads));
  md.set(p + "ssm.time_step_rank", static_cast<uint32_t>(*v_heads));
  md.set(p + "ssm.inner_size", static_cast<uint32_t>(*v_dim * *v_heads));
  md.set(p + "full_attention_interval", static_cast<uint32_t>(*interval));
  md.set(p + "rope.dimension_sections", std::move(sections));
  c.hybrid = true;
  c.n_mtp_layers = *mtp;
  c.lin_k_heads = *k_heads;
  c.lin_v_heads = *v_heads;
  c.lin_head_dim = *k_dim;
  return Status::ok();
}

std::vector<int64_t> tiled_value_rows(int64_t rows, int64_t first, int64_t per_head, int64_t k_heads,
                                      int64_t v_heads) {
  std::vector<int64_t> src(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) src[static_cast<size_t>(i)] = i;
  const int64_t per_key = v_heads / k_heads;
  // Destination head h = r * k_heads + k takes key head k's r-th value head, k * per_key + r.
  for (int64_t h = 0; h < v_heads; ++h) {
    const int64_t k = h % k_heads, r = h / k_heads, from = k * per_key + r;
    for (int64_t j = 0; j < per_head; ++j)
      src[static_cast<size_t>(first + h * per_head + j)] = first + from * per_head + j;
  }
  return src;
}

}  // namespace sy::hf
