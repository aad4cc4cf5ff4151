// `switchyard convert`, `quantize` from a folder, and `gguf split` / `merge`
// (runtime/gguf_tools) on the shared Hugging Face folders:
//  - every variant of formats/index.json (bf16, fused experts, AWQ, GPTQ with act-order, FP8)
//    converted with --outtype f32 gives the folder's logits.json to float32 accuracy, the
//    reference that came with the checkpoint (so names, layouts, the act-order column order
//    and the hyper-parameter keys are right, not merely self-consistent);
//  - --outtype auto keeps bf16 as bf16: the GGUF gives the folder's own logits bit for bit;
//  - quantize reading the folder writes the same tensor bytes as quantize reading that
//    folder's f32 GGUF;
//  - a split set holds every tensor once with its bytes, loads as one model with the same
//    logits, and merges back into the original tensors;
//  - the Qwen-family fixtures (llama.cpp's layout of each architecture) written back as the
//    Hugging Face folders they would have come from convert to their own tensors and keys.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <iterator>
#include <span>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine_support.hpp"
#include "gguf_tools/convert.hpp"
#include "gguf_tools/split.hpp"
#include "logits_json.hpp"
#include "model.hpp"
#include "parse.hpp"
#include "split.hpp"
#include "quantize/quantize.hpp"
#include "safetensors_bytes.hpp"
#include "support.hpp"

namespace convert_test {

namespace fs = std::filesystem;
namespace gt = sy::gguf_tools;

const fs::path kFormats = fs::path(SY_SHARED_DIR) / "formats";

std::vector<fs::path> all_variants() {
  std::ifstream in(kFormats / "index.json");
  REQUIRE(in);
  const auto index = nlohmann::json::parse(in);
  std::vector<fs::path> out;
  for (const auto& [model, m] : index["models"].items())
    for (const auto& [name, v] : m["variants"].items()) out.push_back(kFormats / model / name);
  REQUIRE(out.size() >= 10);
  return out;
}

void convert(const fs::path& dir, const fs::path& out, gt::OutType t) {
  gt::ConvertOptions o;
  o.outtype = t;
  o.threads = 2;
  auto sum = gt::convert_folder(dir, out, o);
  INFO(dir.string() << ": " << sum.status().message());
  REQUIRE(sum);
}

// name -> bytes of every tensor of a GGUF (any shard of a set).
std::map<std::string, std::vector<std::byte>> tensor_bytes_of(const fs::path& file) {
  auto m = sy::gguf::Model::open(file);
  INFO(file.string() << ": " << m.status().message());
  REQUIRE(m);
  std::map<std::string, std::vector<std::byte>> out;
  const auto ts = (*m)->tensors();
  for (size_t i = 0; i < ts.size(); ++i) {
    auto v = (*m)->view(i);
    REQUIRE(v);
    out[ts[i].name].assign(v->begin(), v->end());
  }
  return out;
}

sy::gguf::File parsed(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto f = sy::gguf::parse(std::as_bytes(std::span(bytes.data(), bytes.size())), p.string());
  INFO(f.status().message());
  REQUIRE(f);
  return std::move(*f);
}

std::vector<float> batch_logits(const fs::path& model, const std::vector<int32_t>& ids) {
  auto rt = sy::test::bring_up_model(model);
  auto& e = *rt->engine;
  REQUIRE(e.kv().add(0).is_ok());
  std::vector<sy::engine::BatchToken> batch;
  for (int32_t t : ids) batch.push_back({0, t, true});
  std::vector<float> all;
  REQUIRE(e.decode(batch, all).is_ok());
  return all;
}

std::vector<int32_t> reference_ids(const fs::path& dir) {
  std::ifstream in(dir / "logits.json");
  REQUIRE(in);
  return nlohmann::json::parse(in)["ids"].get<std::vector<int32_t>>();
}

}  // namespace convert_test

using namespace convert_test;

TEST_CASE("convert: every shared folder as f32 gives the checkpoint's reference logits", "[convert]") {
  sy::test::TempDir tmp;
  for (const auto& dir : all_variants()) {
    SECTION(dir.parent_path().filename().string() + "/" + dir.filename().string()) {
      convert(dir, tmp / "f32.gguf", gt::OutType::f32);
      auto m = sy::gguf::Model::open(tmp / "f32.gguf");
      REQUIRE(m);
      for (const auto& t : (*m)->tensors()) {
        INFO(t.name);
        CHECK(t.type == sy::StorageType::F32);
        // The readers' helper tensors are folded into the weights, never written.
        CHECK(!t.name.ends_with(".input_order"));
        CHECK(!t.name.ends_with(".input_scale"));
      }
      CHECK((*m)->metadata().get_string("tokenizer.ggml.model") == "none");
      sy::test::check_logits(dir, tmp / "f32.gguf", 1e-5);
    }
  }
}

TEST_CASE("convert: auto keeps bf16, and the GGUF gives the folder's own logits bit for bit", "[convert]") {
  sy::test::TempDir tmp;
  for (const char* model : {"qwen3-tiny", "qwen3moe-tiny"}) {
    const fs::path dir = kFormats / model / "bf16";
    convert(dir, tmp / "auto.gguf", gt::OutType::automatic);
    auto m = sy::gguf::Model::open(tmp / "auto.gguf");
    REQUIRE(m);
    size_t bf16 = 0;
    for (const auto& t : (*m)->tensors()) {
      INFO(t.name);
      if (t.shape.size() == 1) CHECK(t.type == sy::StorageType::F32);
      bf16 += t.type == sy::StorageType::BF16;
    }
    CHECK(bf16 > 0);
    CHECK((*m)->metadata().get_int("general.file_type") == 32);  // llama.cpp's MOSTLY_BF16
    const auto ids = reference_ids(dir);
    const auto want = batch_logits(dir, ids);
    const auto got = batch_logits(tmp / "auto.gguf", ids);
    REQUIRE(got.size() == want.size());
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("quantize: a folder quantizes to the bytes its f32 GGUF quantizes to", "[convert][quantize]") {
  sy::test::TempDir tmp;
  const fs::path dir = kFormats / "qwen3moe-tiny" / "bf16";
  convert(dir, tmp / "f32.gguf", gt::OutType::f32);
  for (const char* recipe : {"Q8_0", "Q4_K_M"}) {
    sy::quant_tool::QuantizeOptions o;
    auto r = sy::quant_tool::parse_recipe(recipe);
    REQUIRE(r);
    o.recipe = *r;
    o.threads = 2;
    auto a = sy::quant_tool::quantize_model(dir, tmp / "from-folder.gguf", o);
    INFO(a.status().message());
    REQUIRE(a);
    auto b = sy::quant_tool::quantize_model(tmp / "f32.gguf", tmp / "from-gguf.gguf", o);
    REQUIRE(b);
    CHECK(a->quantized > 0);
    const auto x = tensor_bytes_of(tmp / "from-folder.gguf"), y = tensor_bytes_of(tmp / "from-gguf.gguf");
    REQUIRE(x.size() == y.size());
    for (const auto& [name, bytes] : x) {
      INFO(recipe << " " << name);
      REQUIRE(y.count(name) == 1);
      CHECK(bytes == y.at(name));
    }
  }
}

TEST_CASE("gguf split and merge: every tensor once, the same model, and back", "[convert][split]") {
  sy::test::TempDir tmp;
  const fs::path dir = kFormats / "qwen3moe-tiny" / "bf16";
  convert(dir, tmp / "whole.gguf", gt::OutType::f32);
  const auto whole = tensor_bytes_of(tmp / "whole.gguf");

  gt::SplitOptions o;
  o.max_tensors = 7;
  auto shards = gt::split_model(tmp / "whole.gguf", tmp / "part", o, false);
  INFO(shards.status().message());
  REQUIRE(shards);
  REQUIRE(shards->size() == (whole.size() + 6) / 7);
  CHECK(shards->front().filename() ==
        "part-00001-of-0000" + std::to_string(shards->size()) + ".gguf");
  // The first shard holds every key and split.tensors.count; the others their tensors and
  // split.no / split.count only (as gguf-split writes them).
  for (size_t i = 0; i < shards->size(); ++i) {
    const auto f = parsed((*shards)[i]);
    INFO("shard " << i);
    CHECK(sy::gguf::kv_int(f, "split.no") == static_cast<int64_t>(i));
    CHECK(sy::gguf::kv_int(f, "split.count") == static_cast<int64_t>(shards->size()));
    CHECK(f.tensors.size() == (i + 1 < shards->size() ? 7 : whole.size() - 7 * i));
    if (i == 0) {
      CHECK(sy::gguf::kv_int(f, "split.tensors.count") == static_cast<int64_t>(whole.size()));
      CHECK(sy::gguf::find_kv(f, "general.architecture") != nullptr);
    } else {
      CHECK(f.kv.size() == 2);
    }
  }
  const auto set = tensor_bytes_of(shards->back());  // any shard opens the whole set
  CHECK(set == whole);
  sy::test::check_logits(dir, shards->front(), 1e-5);

  // By size: no shard's tensors pass the limit unless one tensor alone does.
  o.max_bytes = 64 * 1024;
  auto by_size = gt::split_model(tmp / "whole.gguf", tmp / "sized", o, false);
  REQUIRE(by_size);
  CHECK(by_size->size() > 1);
  for (const auto& p : *by_size) {
    const auto f = parsed(p);
    uint64_t bytes = 0;
    for (const auto& t : f.tensors) bytes += t.desc.bytes;
    INFO(p.string());
    CHECK((bytes <= o.max_bytes || f.tensors.size() == 1));
  }
  CHECK(tensor_bytes_of(by_size->front()) == whole);

  REQUIRE(gt::merge_model((*shards)[1], tmp / "merged.gguf").is_ok());
  CHECK(tensor_bytes_of(tmp / "merged.gguf") == whole);
  auto merged = sy::gguf::Model::open(tmp / "merged.gguf");
  REQUIRE(merged);
  CHECK((*merged)->shard_count() == 1);
  CHECK(!(*merged)->metadata().contains("split.count"));
}

namespace convert_test {

// The Hugging Face name of a Qwen-family GGUF tensor (transformers' Qwen2/Qwen3/Qwen2-MoE/
// Qwen3-MoE modules); "" for a stack of experts (written per expert by the caller).
std::string hf_name(const std::string& g) {
  static const std::vector<std::pair<std::string, std::string>> layer{
      {"attn_norm.weight", "input_layernorm.weight"},         {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"attn_q.weight", "self_attn.q_proj.weight"},           {"attn_k.weight", "self_attn.k_proj.weight"},
      {"attn_v.weight", "self_attn.v_proj.weight"},           {"attn_q.bias", "self_attn.q_proj.bias"},
      {"attn_k.bias", "self_attn.k_proj.bias"},               {"attn_v.bias", "self_attn.v_proj.bias"},
      {"attn_output.weight", "self_attn.o_proj.weight"},      {"attn_q_norm.weight", "self_attn.q_norm.weight"},
      {"attn_k_norm.weight", "self_attn.k_norm.weight"},      {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},                {"ffn_down.weight", "mlp.down_proj.weight"},
      {"ffn_gate_inp.weight", "mlp.gate.weight"},             {"ffn_gate_inp_shexp.weight", "mlp.shared_expert_gate.weight"},
      {"ffn_gate_shexp.weight", "mlp.shared_expert.gate_proj.weight"},
      {"ffn_up_shexp.weight", "mlp.shared_expert.up_proj.weight"},
      {"ffn_down_shexp.weight", "mlp.shared_expert.down_proj.weight"}};
  if (g == "token_embd.weight") return "model.embed_tokens.weight";
  if (g == "output_norm.weight") return "model.norm.weight";
  if (g == "output.weight") return "lm_head.weight";
  const auto dot = g.find('.', 4);
  const std::string n = g.substr(4, dot - 4), rest = g.substr(dot + 1);
  for (const auto& [from, to] : layer)
    if (rest == from) return "model.layers." + n + "." + to;
  REQUIRE((rest.find("_exps.") != std::string::npos));
  return "";
}

// A GGUF fixture (F32) written back as the Hugging Face folder it would have come from.
void write_folder(const fs::path& gguf, const fs::path& dir) {
  auto m = sy::gguf::Model::open(gguf);
  REQUIRE(m);
  const auto& md = (*m)->metadata();
  const std::string arch = *md.get_string("general.architecture");
  const std::string p = arch + ".";
  const std::map<std::string, std::string> classes{{"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"},
                                                   {"qwen2moe", "Qwen2MoeForCausalLM"}, {"qwen3moe", "Qwen3MoeForCausalLM"}};
  std::vector<sy::test::StEntry> st;
  bool has_output = false;
  const auto ts = (*m)->tensors();
  for (size_t i = 0; i < ts.size(); ++i) {
    REQUIRE(ts[i].type == sy::StorageType::F32);
    auto v = (*m)->view(i);
    REQUIRE(v);
    const auto* bytes = reinterpret_cast<const unsigned char*>(v->data());
    std::vector<int64_t> shape(ts[i].shape.rbegin(), ts[i].shape.rend());  // GGUF lists the fastest dimension first
    has_output = has_output || ts[i].name == "output.weight";
    const std::string name = hf_name(ts[i].name);
    if (name.empty()) {  // blk.N.ffn_{gate,up,down}_exps: one matrix per expert
      const std::string n = ts[i].name.substr(4, ts[i].name.find('.', 4) - 4);
      const std::string kind = ts[i].name.substr(ts[i].name.find("ffn_") + 4, ts[i].name.find("_exps") - ts[i].name.find("ffn_") - 4);
      const int64_t experts = ts[i].shape[2];
      const size_t each = v->size() / static_cast<size_t>(experts);
      for (int64_t e = 0; e < experts; ++e)
        st.push_back({"model.layers." + n + ".mlp.experts." + std::to_string(e) + "." + kind + "_proj.weight", "F32",
                      {ts[i].shape[1], ts[i].shape[0]}, {bytes + e * each, bytes + (e + 1) * each}});
      continue;
    }
    if (ts[i].name.ends_with("ffn_gate_inp_shexp.weight")) shape = {1, ts[i].shape[0]};
    st.push_back({name, "F32", shape, {bytes, bytes + v->size()}});
  }
  nlohmann::json cfg{{"architectures", {classes.at(arch)}},
                     {"hidden_size", *md.get_int(p + "embedding_length")},
                     {"num_hidden_layers", *md.get_int(p + "block_count")},
                     {"num_attention_heads", *md.get_int(p + "attention.head_count")},
                     {"num_key_value_heads", *md.get_int(p + "attention.head_count_kv")},
                     {"intermediate_size", *md.get_int(p + "feed_forward_length")},
                     {"rms_norm_eps", *md.get_float(p + "attention.layer_norm_rms_epsilon")},
                     {"rope_theta", *md.get_float(p + "rope.freq_base")},
                     {"max_position_embeddings", *md.get_int(p + "context_length")},
                     {"vocab_size", ts[0].name == "token_embd.weight" ? ts[0].shape[1] : 512},
                     {"tie_word_embeddings", !has_output}};
  if (auto kl = md.get_int(p + "attention.key_length")) cfg["head_dim"] = *kl;
  if (auto n = md.get_int(p + "expert_count")) {
    cfg["num_experts"] = *n;
    cfg["num_experts_per_tok"] = *md.get_int(p + "expert_used_count");
    cfg["moe_intermediate_size"] = *md.get_int(p + "expert_feed_forward_length");
    cfg["norm_topk_prob"] = arch == "qwen3moe";
    if (auto sh = md.get_int(p + "expert_shared_feed_forward_length")) cfg["shared_expert_intermediate_size"] = *sh;
  }
  sy::test::write_bytes(dir / "config.json", cfg.dump());
  sy::test::write_bytes(dir / "model.safetensors", sy::test::safetensors_bytes(st));
}

}  // namespace convert_test

TEST_CASE("convert: a Qwen-family fixture written back as a Hugging Face folder converts to the fixture", "[convert]") {
  // The fixtures are llama.cpp's layout of each architecture: converting the folder they
  // would have come from must give their tensors byte for byte, and their hyper-parameters.
  sy::test::TempDir tmp;
  for (const char* name : {"qwen2-bias-e64-f32", "qwen3-qknorm-e64-f32", "qwen2moe-e64-f32", "qwen3moe-e64-f32"}) {
    SECTION(name) {
      const fs::path fixture = fs::path(SY_SHARED_DIR) / "fixtures" / (std::string(name) + ".gguf");
      write_folder(fixture, tmp / name);
      convert(tmp / name, tmp / "out.gguf", gt::OutType::f32);
      const auto want = tensor_bytes_of(fixture), got = tensor_bytes_of(tmp / "out.gguf");
      for (const auto& [t, bytes] : want) {
        INFO(t);
        REQUIRE(got.count(t) == 1);
        CHECK(got.at(t) == bytes);
      }
      CHECK(got.size() == want.size());
      auto a = sy::gguf::Model::open(fixture), b = sy::gguf::Model::open(tmp / "out.gguf");
      REQUIRE(a);
      REQUIRE(b);
      for (const auto& [key, value] : (*a)->metadata().entries()) {
        if (key.starts_with("general.") || key.starts_with("tokenizer.")) continue;
        INFO(key);
        if ((*a)->metadata().get_int(key)) CHECK((*b)->metadata().get_int(key) == (*a)->metadata().get_int(key));
        else if ((*a)->metadata().get_float(key)) CHECK((*b)->metadata().get_float(key) == Approx(*(*a)->metadata().get_float(key)));
      }
    }
  }
}
