// Qwen3.5/3.6 MoE folders (Qwen3_5MoeForConditionalGeneration) through the hf reader, against
// llama.cpp. There is no tiny Qwen3.5 checkpoint in shared/formats, so each F32 qwen35moe
// fixture GGUF is turned back into the checkpoint llama.cpp's convert_hf_to_gguf.py would have
// read: the inverse of what that converter does to Qwen3.5 tensors (norms store w - 1,
// A_log = log(-ssm_a), dt_proj.bias is dt_bias, conv1d gains its middle unit dimension, and
// value heads go back from the converter's tiled order to transformers' order grouped by key
// head). The hf reader must undo each step: every canonical tensor equals the fixture's (bit
// for bit where no arithmetic is involved), and the engine running the folder gives
// llama.cpp's teacher-forced logits within the fixture's own tolerance.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "conformance/fixtures.hpp"
#include "engine_support.hpp"
#include "hf_model.hpp"
#include "model.hpp"
#include "names.hpp"
#include "safetensors_bytes.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"
#include "fp8_scheme.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using sy::test::StEntry;

namespace {

const fs::path kFixtures = fs::path(SY_SHARED_DIR) / "fixtures";

struct Fixture {
  std::unique_ptr<sy::gguf::Model> gguf;
  std::map<std::string, size_t> index;

  [[nodiscard]] const sy::TensorDesc& desc(const std::string& name) const { return gguf->tensors()[index.at(name)]; }
  [[nodiscard]] std::vector<float> values(const std::string& name) const {
    const auto& d = desc(name);
    REQUIRE(d.type == sy::StorageType::F32);
    std::vector<float> v(d.elements());
    REQUIRE(gguf->read(index.at(name), 0, std::as_writable_bytes(std::span(v))).is_ok());
    return v;
  }
  [[nodiscard]] int64_t hp(const std::string& key) const {
    const auto v = gguf->metadata().get_int("qwen35moe." + key);
    REQUIRE(v.has_value());
    return *v;
  }
};

Fixture open_fixture(const std::string& name) {
  Fixture f;
  auto m = sy::gguf::Model::open(kFixtures / (name + ".gguf"));
  REQUIRE(m.has_value());
  f.gguf = std::move(*m);
  for (size_t i = 0; i < f.gguf->tensors().size(); ++i) f.index[f.gguf->tensors()[i].name] = i;
  return f;
}

StEntry f32(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
  StEntry e{name, "F32", std::move(shape), std::vector<unsigned char>(v.size() * 4)};
  std::memcpy(e.data.data(), v.data(), e.data.size());
  return e;
}

// Value heads from llama.cpp's tiled order (value head h pairs with key head h mod k_heads)
// back to transformers' order (key head k's heads together: k * per_key + r), along the
// `count` units from `first` of a list of units `unit` floats long.
std::vector<float> grouped(const std::vector<float>& tiled, int64_t first, int64_t per_head, int64_t unit,
                           int64_t k_heads, int64_t v_heads) {
  std::vector<float> out = tiled;
  const int64_t per_key = v_heads / k_heads;
  for (int64_t k = 0; k < k_heads; ++k)
    for (int64_t r = 0; r < per_key; ++r) {
      const int64_t g = k * per_key + r, t = r * k_heads + k;
      for (int64_t j = 0; j < per_head * unit; ++j)
        out[static_cast<size_t>((first + g * per_head) * unit + j)] = tiled[static_cast<size_t>((first + t * per_head) * unit + j)];
    }
  return out;
}

// A per-tensor FP8 scale that keeps the fixture's weights (|w| < 1) well inside E4M3's range.
constexpr float kFp8Scale = 1.0f / 256;

StEntry e4m3(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
  StEntry e{name, "F8_E4M3", std::move(shape), std::vector<unsigned char>(v.size())};
  for (size_t i = 0; i < v.size(); ++i) e.data[i] = sy::fp8_e4m3_encode(v[i] / kFp8Scale);
  return e;
}

std::vector<float> minus_one(std::vector<float> v) {
  for (auto& x : v) x -= 1.0f;
  return v;
}

// Columns of a [rows, cols] matrix regrouped the same way, each row on its own.
std::vector<float> grouped_columns(const std::vector<float>& m, int64_t rows, int64_t cols, int64_t per_head,
                                   int64_t k_heads, int64_t v_heads) {
  std::vector<float> out(m.size());
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> row(m.begin() + r * cols, m.begin() + (r + 1) * cols);
    const auto g = grouped(row, 0, per_head, 1, k_heads, v_heads);
    std::copy(g.begin(), g.end(), out.begin() + r * cols);
  }
  return out;
}

// The checkpoint convert_hf_to_gguf.py would have turned into this fixture, and its config.
// With `fp8`, the delta-net's in_proj_qkv, in_proj_z and out_proj are E4M3 codes with a
// per-tensor weight_scale (transformers' fp8 format), the rest stays F32.
void write_checkpoint(const Fixture& f, const fs::path& dir, bool fused_experts, bool fp8 = false) {
  const int64_t embd = f.hp("embedding_length"), layers = f.hp("block_count"), heads = f.hp("attention.head_count");
  const int64_t kh = f.hp("ssm.group_count"), vh = f.hp("ssm.time_step_rank"), sd = f.hp("ssm.state_size");
  const int64_t n_exp = f.hp("expert_count"), ff = f.hp("expert_feed_forward_length");
  const int64_t interval = f.hp("full_attention_interval"), hd = f.hp("attention.key_length");
  const int64_t vocab = f.desc("token_embd.weight").shape[1];
  const std::string P = "model.language_model.";
  std::vector<StEntry> ts;
  auto same = [&](const std::string& hf, const std::string& g, std::vector<int64_t> shape) {
    ts.push_back(f32(hf, std::move(shape), f.values(g)));
  };
  same(P + "embed_tokens.weight", "token_embd.weight", {vocab, embd});
  same("lm_head.weight", "output.weight", {vocab, embd});
  ts.push_back(f32(P + "norm.weight", {embd}, minus_one(f.values("output_norm.weight"))));
  for (int64_t il = 0; il < layers; ++il) {
    const std::string L = P + "layers." + std::to_string(il) + ".", b = "blk." + std::to_string(il) + ".";
    ts.push_back(f32(L + "input_layernorm.weight", {embd}, minus_one(f.values(b + "attn_norm.weight"))));
    ts.push_back(f32(L + "post_attention_layernorm.weight", {embd}, minus_one(f.values(b + "post_attention_norm.weight"))));
    if ((il + 1) % interval == 0) {
      same(L + "self_attn.q_proj.weight", b + "attn_q.weight", {2 * heads * hd, embd});
      same(L + "self_attn.k_proj.weight", b + "attn_k.weight", {f.desc(b + "attn_k.weight").shape[1], embd});
      same(L + "self_attn.v_proj.weight", b + "attn_v.weight", {f.desc(b + "attn_v.weight").shape[1], embd});
      same(L + "self_attn.o_proj.weight", b + "attn_output.weight", {embd, heads * hd});
      ts.push_back(f32(L + "self_attn.q_norm.weight", {hd}, minus_one(f.values(b + "attn_q_norm.weight"))));
      ts.push_back(f32(L + "self_attn.k_norm.weight", {hd}, minus_one(f.values(b + "attn_k_norm.weight"))));
    } else {
      const int64_t ch = 2 * kh * sd + vh * sd, kernel = f.hp("ssm.conv_kernel");
      const std::string A = L + "linear_attn.";
      const auto linear = [&](const std::string& hf, std::vector<int64_t> shape, const std::vector<float>& v) {
        ts.push_back(fp8 ? e4m3(hf, std::move(shape), v) : f32(hf, std::move(shape), v));
        if (fp8) ts.push_back(f32(hf.substr(0, hf.size() - 7) + ".weight_scale", {}, {kFp8Scale}));
      };
      linear(A + "in_proj_qkv.weight", {ch, embd}, grouped(f.values(b + "attn_qkv.weight"), 2 * kh * sd, sd, embd, kh, vh));
      linear(A + "in_proj_z.weight", {vh * sd, embd}, grouped(f.values(b + "attn_gate.weight"), 0, sd, embd, kh, vh));
      ts.push_back(f32(A + "in_proj_a.weight", {vh, embd}, grouped(f.values(b + "ssm_alpha.weight"), 0, 1, embd, kh, vh)));
      ts.push_back(f32(A + "in_proj_b.weight", {vh, embd}, grouped(f.values(b + "ssm_beta.weight"), 0, 1, embd, kh, vh)));
      auto a = f.values(b + "ssm_a");
      for (auto& x : a) {
        REQUIRE(x < 0);  // -exp(A_log)
        x = std::log(-x);
      }
      ts.push_back(f32(A + "A_log", {vh}, grouped(a, 0, 1, 1, kh, vh)));
      ts.push_back(f32(A + "dt_bias", {vh}, grouped(f.values(b + "ssm_dt.bias"), 0, 1, 1, kh, vh)));
      ts.push_back(f32(A + "conv1d.weight", {ch, 1, kernel}, grouped(f.values(b + "ssm_conv1d.weight"), 2 * kh * sd, sd, kernel, kh, vh)));
      same(A + "norm.weight", b + "ssm_norm.weight", {sd});
      linear(A + "out_proj.weight", {embd, vh * sd}, grouped_columns(f.values(b + "ssm_out.weight"), embd, vh * sd, sd, kh, vh));
    }
    same(L + "mlp.gate.weight", b + "ffn_gate_inp.weight", {n_exp, embd});
    const auto gate = f.values(b + "ffn_gate_exps.weight"), up = f.values(b + "ffn_up_exps.weight");
    const auto down = f.values(b + "ffn_down_exps.weight");
    const auto per = static_cast<size_t>(ff * embd);
    if (fused_experts) {
      // transformers v5: gate_up_proj [E, 2 ff, embd], each expert's gate rows then its up rows.
      std::vector<float> gu;
      for (int64_t e = 0; e < n_exp; ++e) {
        gu.insert(gu.end(), gate.begin() + e * per, gate.begin() + (e + 1) * per);
        gu.insert(gu.end(), up.begin() + e * per, up.begin() + (e + 1) * per);
      }
      ts.push_back(f32(L + "mlp.experts.gate_up_proj", {n_exp, 2 * ff, embd}, gu));
      ts.push_back(f32(L + "mlp.experts.down_proj", {n_exp, embd, ff}, down));
    } else {
      for (int64_t e = 0; e < n_exp; ++e) {
        const std::string E = L + "mlp.experts." + std::to_string(e) + ".";
        auto part = [&](const std::vector<float>& v) { return std::vector<float>(v.begin() + e * per, v.begin() + (e + 1) * per); };
        ts.push_back(f32(E + "gate_proj.weight", {ff, embd}, part(gate)));
        ts.push_back(f32(E + "up_proj.weight", {ff, embd}, part(up)));
        ts.push_back(f32(E + "down_proj.weight", {embd, ff}, part(down)));
      }
    }
    const int64_t sh = f.hp("expert_shared_feed_forward_length");
    same(L + "mlp.shared_expert.gate_proj.weight", b + "ffn_gate_shexp.weight", {sh, embd});
    same(L + "mlp.shared_expert.up_proj.weight", b + "ffn_up_shexp.weight", {sh, embd});
    same(L + "mlp.shared_expert.down_proj.weight", b + "ffn_down_shexp.weight", {embd, sh});
    same(L + "mlp.shared_expert_gate.weight", b + "ffn_gate_inp_shexp.weight", {1, embd});
  }
  // What the real checkpoint carries beside the language model: skipped, with a note.
  ts.push_back(f32("model.visual.blocks.0.attn.qkv.weight", {6, 2}, std::vector<float>(12, 0.5f)));
  ts.push_back(f32("mtp.fc.weight", {2, 4}, std::vector<float>(8, 0.25f)));

  std::vector<int> sections;
  for (int i = 0; i < 3; ++i) {
    const auto* v = f.gguf->metadata().find("qwen35moe.rope.dimension_sections");
    REQUIRE(v);
    sections.push_back(static_cast<int>(*sy::meta_as_int(std::get<sy::MetaArray>(*v).items[static_cast<size_t>(i)])));
  }
  json layer_types = json::array();
  for (int64_t il = 0; il < layers; ++il) layer_types.push_back((il + 1) % interval == 0 ? "full_attention" : "linear_attention");
  const json text = {
      {"model_type", "qwen3_5_moe_text"},
      {"hidden_size", embd},
      {"num_hidden_layers", layers},
      {"num_attention_heads", heads},
      {"num_key_value_heads", f.hp("attention.head_count_kv")},
      {"head_dim", hd},
      {"vocab_size", vocab},
      {"max_position_embeddings", f.hp("context_length")},
      {"rms_norm_eps", *f.gguf->metadata().get_float("qwen35moe.attention.layer_norm_rms_epsilon")},
      {"num_experts", n_exp},
      {"num_experts_per_tok", f.hp("expert_used_count")},
      {"moe_intermediate_size", ff},
      {"shared_expert_intermediate_size", f.hp("expert_shared_feed_forward_length")},
      {"full_attention_interval", interval},
      {"layer_types", layer_types},
      {"linear_conv_kernel_dim", f.hp("ssm.conv_kernel")},
      {"linear_key_head_dim", sd},
      {"linear_value_head_dim", sd},
      {"linear_num_key_heads", kh},
      {"linear_num_value_heads", vh},
      {"attn_output_gate", true},
      {"mtp_num_hidden_layers", 1},
      {"rope_parameters",
       {{"rope_type", "default"},
        {"rope_theta", *f.gguf->metadata().get_float("qwen35moe.rope.freq_base")},
        {"partial_rotary_factor", static_cast<double>(f.hp("rope.dimension_count")) / static_cast<double>(hd)},
        {"mrope_interleaved", true},
        {"mrope_section", sections}}}};
  json config = {{"architectures", {"Qwen3_5MoeForConditionalGeneration"}},
                 {"model_type", "qwen3_5_moe"},
                 {"tie_word_embeddings", false},
                 {"text_config", text},
                 {"vision_config", {{"depth", 1}}}};
  if (fp8) config["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}};
  sy::test::write_file(dir / "config.json", config.dump(1));
  sy::test::write_bytes(dir / "model.safetensors", sy::test::safetensors_bytes(ts, {{"format", "pt"}}));
}

// 4 units in the last place of the larger of |want| and 1: a value that went through
// w - 1 then + 1, or log then -exp, in float32.
bool close_in_f32(float got, float want) {
  return std::abs(got - want) <= 4 * std::ldexp(1.0f, -24) * std::max(1.0f, std::abs(want));
}

}  // namespace

TEST_CASE("hf: Qwen3.5 MoE folders map to llama.cpp's tensors and give its logits", "[hf][engine][qwen35]") {
  for (const auto& [name, fused] : std::vector<std::pair<std::string, bool>>{{"qwen35moe-e128-f32", true},
                                                                             {"qwen35moe-e64-p100-f32", false}}) {
    DYNAMIC_SECTION(name << (fused ? ", fused experts" : ", per-expert tensors")) {
      const Fixture f = open_fixture(name);
      sy::test::TempDir dir;
      write_checkpoint(f, dir.path(), fused);

      auto m = sy::hf::Model::open(dir.path());
      REQUIRE(m.has_value());
      const sy::ModelSource& hf = **m;
      CHECK(hf.metadata().get_string("general.architecture").value_or("") == "qwen35moe");
      for (const char* key : {"ssm.conv_kernel", "ssm.state_size", "ssm.group_count", "ssm.time_step_rank",
                              "ssm.inner_size", "full_attention_interval", "expert_shared_feed_forward_length",
                              "rope.dimension_count", "attention.key_length", "expert_feed_forward_length"}) {
        INFO(key);
        CHECK(hf.metadata().get_int(std::string("qwen35moe.") + key) == f.hp(key));
      }
      CHECK(hf.metadata().get_string("general.source.skipped").value_or("").find("vision") != std::string::npos);

      // Every tensor of the fixture, from the folder: the same shape and values. Fused
      // experts arrive as llama.cpp's ffn_gate_up_exps: per expert, its gate rows then its up rows.
      const int64_t layers = f.hp("block_count");
      REQUIRE(hf.tensors().size() == f.gguf->tensors().size() - (fused ? static_cast<size_t>(layers) : 0));
      std::map<std::string, size_t> hf_index;
      for (size_t i = 0; i < hf.tensors().size(); ++i) hf_index[hf.tensors()[i].name] = i;
      const auto hf_values = [&](const std::string& t) {
        REQUIRE(hf_index.count(t) == 1);
        const auto& h = hf.tensors()[hf_index[t]];
        REQUIRE(h.type == sy::StorageType::F32);
        std::vector<float> v(h.elements());
        REQUIRE(hf.read(hf_index[t], 0, std::as_writable_bytes(std::span(v))).is_ok());
        return v;
      };
      for (const auto& d : f.gguf->tensors()) {
        INFO(d.name);
        const bool gate = d.name.ends_with("ffn_gate_exps.weight"), up = d.name.ends_with("ffn_up_exps.weight");
        std::vector<float> got;
        if (fused && (gate || up)) {
          const std::string gu = d.name.substr(0, d.name.find("ffn_")) + "ffn_gate_up_exps.weight";
          const auto all = hf_values(gu);
          const auto per = static_cast<size_t>(d.shape[0] * d.shape[1]);
          CHECK(hf.tensors()[hf_index[gu]].shape == std::vector<int64_t>{d.shape[0], 2 * d.shape[1], d.shape[2]});
          for (int64_t e = 0; e < d.shape[2]; ++e) {
            const auto from = all.begin() + static_cast<std::ptrdiff_t>((2 * static_cast<size_t>(e) + (up ? 1 : 0)) * per);
            got.insert(got.end(), from, from + static_cast<std::ptrdiff_t>(per));
          }
        } else {
          REQUIRE(hf_index.count(d.name) == 1);
          CHECK(hf.tensors()[hf_index[d.name]].shape == d.shape);
          got = hf_values(d.name);
        }
        const auto want = f.values(d.name);
        REQUIRE(got.size() == want.size());
        const bool computed = d.name.ends_with("norm.weight") || d.name.ends_with("ssm_a");
        const bool exact_copy = !computed || d.name.ends_with("ssm_norm.weight");
        size_t bad = 0;
        for (size_t k = 0; k < want.size(); ++k)
          bad += exact_copy ? (std::memcmp(&got[k], &want[k], 4) != 0) : !close_in_f32(got[k], want[k]);
        CHECK(bad == 0);
      }

      // The engine on the folder against llama.cpp's run of the GGUF.
      auto ref = sy::conformance::read_reference(kFixtures / (name + ".ref.json"));
      REQUIRE(ref.has_value());
      auto rt = sy::test::bring_up_model(dir.path());
      const auto ids = [](const json& j) { return j.get<std::vector<int32_t>>(); };
      const auto steps = sy::test::teacher_forced(*rt->engine, 0, ids((*ref)["prompt_ids"]), ids((*ref)["greedy_ids"]));
      const auto tf = sy::conformance::check_teacher_forced(steps, *ref);
      std::cout << name << " as a Hugging Face folder: max |logit diff| " << tf.diff.max_abs << " (tolerance "
                << tf.max_abs_tolerance << "), rms " << tf.diff.rms << "\n";
      CHECK(tf.ok());
    }
  }
}

// The real Qwen3.6-35B-A3B checkpoint's names (shared/topologies): every one is mapped or
// knowingly skipped, and the language model's tensors land where the engine reads them.
TEST_CASE("hf: every tensor name of the real Qwen3.6-35B-A3B checkpoint maps or is skipped", "[hf][qwen35]") {
  std::ifstream in(fs::path(SY_SHARED_DIR) / "topologies/qwen3.6-35b-a3b.hf-shapes.json");
  REQUIRE(in);
  const json topo = json::parse(in);
  const json text = {{"hidden_size", 2048},          {"num_hidden_layers", 40},       {"num_attention_heads", 16},
                     {"num_key_value_heads", 2},     {"head_dim", 256},               {"vocab_size", 248320},
                     {"num_experts", 256},           {"num_experts_per_tok", 8},      {"moe_intermediate_size", 512},
                     {"shared_expert_intermediate_size", 512}, {"full_attention_interval", 4},
                     {"linear_conv_kernel_dim", 4},  {"linear_key_head_dim", 128},    {"linear_value_head_dim", 128},
                     {"linear_num_key_heads", 16},   {"linear_num_value_heads", 32},  {"rms_norm_eps", 1e-6},
                     {"rope_parameters", {{"rope_theta", 1e7}, {"partial_rotary_factor", 0.25}}}};
  auto c = sy::hf::read_config({{"architectures", {"Qwen3_5MoeForConditionalGeneration"}}, {"text_config", text}},
                                     "config.json");
  REQUIRE(c.has_value());
  std::map<std::string, int> skipped;
  std::set<std::string> canonical;
  size_t n = 0;
  for (const auto& comp : topo["components"])
    for (const auto& [hf_name, shape] : comp["tensors"].items()) {
      ++n;
      const auto m = sy::hf::map_name(hf_name, *c);
      INFO(hf_name);
      REQUIRE(m.action != sy::hf::Action::unknown);
      if (m.action == sy::hf::Action::skip) {
        ++skipped[m.name];
        continue;
      }
      canonical.insert(m.name);
    }
  CHECK(n == 1045);
  CHECK(skipped.count("vision") == 1);
  CHECK(skipped.count("multi-token prediction") == 1);
  // 30 delta-net layers of 9 tensors, 10 attention layers of 6, 40 x (2 norms + router +
  // 2 fused expert tensors + 4 shared-expert tensors), embeddings, head, final norm.
  CHECK(canonical.size() == 30 * 9 + 10 * 6 + 40 * 9 + 3);
  for (const char* t : {"blk.0.ssm_a", "blk.0.ssm_dt.bias", "blk.0.attn_qkv.weight", "blk.0.ssm_out.weight",
                        "blk.3.attn_q.weight", "blk.39.ffn_gate_up_exps.weight", "blk.39.post_attention_norm.weight"})
    CHECK(canonical.count(t) == 1);
}

// A quantized Qwen3.5 checkpoint: the delta-net's FP8 linears are decoded, then tiled as the
// unquantized ones are: in_proj_qkv's and in_proj_z's rows move; out_proj's columns share
// their blocks' scales, so instead its input is gathered (ssm_out.input_order) from the
// engine's tiled order back to the checkpoint's.
TEST_CASE("hf: a Qwen3.5 FP8 checkpoint's delta-net linears are tiled like the unquantized ones", "[hf][qwen35]") {
  const Fixture f = open_fixture("qwen35moe-e128-f32");
  sy::test::TempDir dir;
  write_checkpoint(f, dir.path(), true, true);
  const sy::hf::QuantReader fp8{"fp8", sy::fp8::make_scheme};
  auto m = sy::hf::Model::open(dir.path(), &fp8);
  INFO((m ? std::string() : m.status().message()));
  REQUIRE(m.has_value());
  const sy::ModelSource& hf = **m;
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < hf.tensors().size(); ++i) at[hf.tensors()[i].name] = i;
  const auto dequantized = [&](const std::string& name) {
    REQUIRE(at.count(name) == 1);
    const auto& d = hf.tensors()[at[name]];
    std::vector<std::byte> raw(d.bytes);
    REQUIRE(hf.read(at[name], 0, raw).is_ok());
    std::vector<float> v(d.elements());
    REQUIRE(sy::dequantize_row(d.type, raw.data(), v.data(), static_cast<int64_t>(v.size())).is_ok());
    return v;
  };
  const auto qdq = [](float w) { return sy::fp8_e4m3_decode(sy::fp8_e4m3_encode(w / kFp8Scale)) * kFp8Scale; };
  for (const char* t : {"blk.0.attn_qkv.weight", "blk.0.attn_gate.weight"}) {
    INFO(t);
    CHECK(hf.tensors()[at[t]].type == sy::StorageType::FP8_E4M3_B128);
    const auto got = dequantized(t);
    const auto want = f.values(t);
    size_t bad = 0;
    for (size_t k = 0; k < want.size(); ++k) bad += got[k] != qdq(want[k]);
    CHECK(bad == 0);
  }
  // ssm_out [cols = value features, rows = embd]: column j of the checkpoint's order reads
  // the engine's feature input_order[j].
  const auto& out = f.desc("blk.0.ssm_out.weight");
  const int64_t cols = out.shape[0], rows = out.shape[1];
  REQUIRE(at.count("blk.0.ssm_out.input_order") == 1);
  std::vector<int32_t> order(static_cast<size_t>(cols));
  REQUIRE(hf.read(at["blk.0.ssm_out.input_order"], 0, std::as_writable_bytes(std::span(order))).is_ok());
  std::vector<int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int32_t i = 0; i < cols; ++i) REQUIRE(sorted[static_cast<size_t>(i)] == i);
  CHECK(!std::is_sorted(order.begin(), order.end()));  // two key heads: the order is not the identity
  const auto got = dequantized("blk.0.ssm_out.weight");
  const auto want = f.values("blk.0.ssm_out.weight");
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      bad += got[static_cast<size_t>(r * cols + j)] != qdq(want[static_cast<size_t>(r * cols + order[static_cast<size_t>(j)])]);
  CHECK(bad == 0);
}
