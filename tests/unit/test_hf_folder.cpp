// Hugging Face model folders (formats/hf) without the engine: shards through an index,
// config.json to metadata, HF names to canonical ones, and the assembled tensors (llama's
// q/k row order, stacked experts, F32 norms) byte for byte against what the formulas say.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>

#include "hf_model.hpp"
#include "probe.hpp"
#include "qwen35.hpp"
#include "safetensors_bytes.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using sy::test::StEntry;

namespace {

// A tiny llama: hidden 8, 2 heads of 4, 1 KV head, FFN 16, vocab 16, one layer.
json llama_config() {
  return {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 8},   {"num_hidden_layers", 1},
          {"num_attention_heads", 2},             {"num_key_value_heads", 1}, {"intermediate_size", 16},
          {"vocab_size", 16},                     {"rms_norm_eps", 1e-5},   {"rope_theta", 10000.0},
          {"max_position_embeddings", 128},       {"torch_dtype", "bfloat16"}};
}

// A [rows, cols] BF16 matrix whose row r holds base + r in every element (exact in BF16).
StEntry matrix(const std::string& name, int64_t rows, int64_t cols, float base = 0) {
  return {name, "BF16", {rows, cols},
          sy::test::bf16_values(static_cast<size_t>(rows * cols), [&](size_t i) { return base + static_cast<float>(i / static_cast<size_t>(cols)); })};
}

StEntry vec(const std::string& name, int64_t n, float v) {
  return {name, "BF16", {n}, sy::test::bf16_values(static_cast<size_t>(n), [&](size_t i) { return v + 0.25f * static_cast<float>(i); })};
}

std::vector<StEntry> llama_tensors() {
  const std::string L = "model.layers.0.";
  return {matrix("model.embed_tokens.weight", 16, 8), vec("model.norm.weight", 8, 1.0f), matrix("lm_head.weight", 16, 8),
          vec(L + "input_layernorm.weight", 8, 1.5f), vec(L + "post_attention_layernorm.weight", 8, 0.5f),
          matrix(L + "self_attn.q_proj.weight", 8, 8), matrix(L + "self_attn.k_proj.weight", 4, 8, 100),
          matrix(L + "self_attn.v_proj.weight", 4, 8), matrix(L + "self_attn.o_proj.weight", 8, 8),
          matrix(L + "mlp.gate_proj.weight", 16, 8), matrix(L + "mlp.up_proj.weight", 16, 8),
          matrix(L + "mlp.down_proj.weight", 8, 16)};
}

void write_folder(const fs::path& dir, const json& config, const std::vector<StEntry>& ts) {
  sy::test::write_file(dir / "config.json", config.dump());
  sy::test::write_bytes(dir / "model.safetensors", sy::test::safetensors_bytes(ts, {{"format", "pt"}}));
}

const sy::TensorDesc* find(const sy::ModelSource& m, const std::string& name, size_t* index = nullptr) {
  const auto ts = m.tensors();
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i].name == name) {
      if (index) *index = i;
      return &ts[i];
    }
  return nullptr;
}

std::vector<std::byte> read_all(const sy::ModelSource& m, size_t i) {
  std::vector<std::byte> out(m.tensors()[i].bytes);
  REQUIRE(m.read(i, 0, out).is_ok());
  return out;
}

float bf16_at(const std::vector<std::byte>& b, size_t i) {
  uint16_t h;
  std::memcpy(&h, b.data() + 2 * i, 2);
  return sy::bf16_to_fp32(h);
}

std::unique_ptr<sy::hf::Model> open_ok(const fs::path& p) {
  auto m = sy::hf::Model::open(p);
  INFO((m ? std::string() : m.status().message()));
  REQUIRE(m.has_value());
  return std::move(*m);
}

std::string open_error(const fs::path& p) {
  auto m = sy::hf::Model::open(p);
  REQUIRE_FALSE(m.has_value());
  return m.status().message();
}

}  // namespace

TEST_CASE("hf: config.json becomes the engine's hyper-parameter keys", "[hf]") {
  sy::test::TempDir dir;
  write_folder(dir.path(), llama_config(), llama_tensors());
  auto m = open_ok(dir.path());
  const auto& md = m->metadata();
  CHECK(md.get_string("general.architecture") == "llama");
  CHECK(md.get_int("llama.embedding_length") == 8);
  CHECK(md.get_int("llama.block_count") == 1);
  CHECK(md.get_int("llama.attention.head_count") == 2);
  CHECK(md.get_int("llama.attention.head_count_kv") == 1);
  CHECK(md.get_int("llama.attention.key_length") == 4);
  CHECK(md.get_int("llama.feed_forward_length") == 16);
  CHECK(md.get_int("llama.context_length") == 128);
  CHECK(md.get_int("llama.rope.dimension_count") == 4);
  CHECK(md.get_float("llama.rope.freq_base") == Approx(10000.0));
  CHECK(md.get_float("llama.attention.layer_norm_rms_epsilon") == Approx(1e-5));
  CHECK(m->tensors().size() == 12);
  CHECK(find(*m, "blk.0.ffn_down.weight")->shape == std::vector<int64_t>{16, 8});  // GGUF order
}

TEST_CASE("hf: llama's q and k rows are reordered from rotated halves to adjacent pairs", "[hf]") {
  sy::test::TempDir dir;
  write_folder(dir.path(), llama_config(), llama_tensors());
  auto m = open_ok(dir.path());
  size_t qi = 0, ki = 0;
  REQUIRE(find(*m, "blk.0.attn_q.weight", &qi));
  REQUIRE(find(*m, "blk.0.attn_k.weight", &ki));
  // convert_hf_to_gguf.py's permute: reshape(heads, 2, hd/2, ...).swapaxes(1, 2), so result
  // row h*hd + 2i + j is checkpoint row h*hd + j*hd/2 + i. With hd 4: 0 2 1 3 | 4 6 5 7.
  const auto q = read_all(*m, qi);
  const std::vector<float> q_rows = {0, 2, 1, 3, 4, 6, 5, 7};
  for (size_t r = 0; r < 8; ++r)
    for (size_t c = 0; c < 8; ++c) CHECK(bf16_at(q, r * 8 + c) == q_rows[r]);
  const auto k = read_all(*m, ki);  // one KV head
  const std::vector<float> k_rows = {100, 102, 101, 103};
  for (size_t r = 0; r < 4; ++r) CHECK(bf16_at(k, r * 8) == k_rows[r]);
  CHECK_FALSE(m->view(qi).has_value());
  CHECK_THAT(m->view(qi).status().message(), Catch::Contains("cannot be mapped"));
}

TEST_CASE("hf: plain matrices are zero-copy views; norms are F32", "[hf]") {
  sy::test::TempDir dir;
  write_folder(dir.path(), llama_config(), llama_tensors());
  auto m = open_ok(dir.path());
  size_t vi = 0, ni = 0;
  REQUIRE(find(*m, "blk.0.attn_v.weight", &vi));
  auto v = m->view(vi);
  REQUIRE(v.has_value());
  const auto& file = *m->checkpoint().shards.front();
  const auto src = file.data(*file.find("model.layers.0.self_attn.v_proj.weight"));
  CHECK(v->data() == src.data());  // in place, not a copy
  CHECK(read_all(*m, vi) == std::vector<std::byte>(src.begin(), src.end()));

  const auto* norm = find(*m, "blk.0.attn_norm.weight", &ni);
  REQUIRE(norm);
  CHECK(norm->type == sy::StorageType::F32);
  CHECK(norm->bytes == 32);
  const auto f = read_all(*m, ni);
  for (size_t i = 0; i < 8; ++i) {
    float x;
    std::memcpy(&x, f.data() + 4 * i, 4);
    CHECK(x == 1.5f + 0.25f * static_cast<float>(i));
  }
  // A range inside the tensor reads the same bytes as the whole.
  std::vector<std::byte> part(6);
  REQUIRE(m->read(ni, 5, part).is_ok());
  CHECK(std::equal(part.begin(), part.end(), f.begin() + 5));
  CHECK_FALSE(m->read(ni, 30, part).is_ok());
}

TEST_CASE("hf: per-expert matrices are stacked into one tensor, in expert order", "[hf]") {
  sy::test::TempDir dir;
  json cfg = llama_config();
  cfg["architectures"] = {"MixtralForCausalLM"};
  cfg["num_local_experts"] = 3;
  cfg["num_experts_per_tok"] = 2;
  auto ts = llama_tensors();
  ts.erase(std::remove_if(ts.begin(), ts.end(), [](const StEntry& t) { return t.name.find(".mlp.") != std::string::npos; }),
           ts.end());
  const std::string L = "model.layers.0.block_sparse_moe.";
  ts.push_back(matrix(L + "gate.weight", 3, 8));
  for (int e = 2; e >= 0; --e) {  // written out of order
    const std::string E = L + "experts." + std::to_string(e) + ".";
    ts.push_back(matrix(E + "w1.weight", 16, 8, 20.0f * static_cast<float>(e)));
    ts.push_back(matrix(E + "w3.weight", 16, 8, 20.0f * static_cast<float>(e) + 1));
    ts.push_back(matrix(E + "w2.weight", 8, 16, 20.0f * static_cast<float>(e) + 2));
  }
  write_folder(dir.path(), cfg, ts);
  auto m = open_ok(dir.path());
  CHECK(m->metadata().get_int("llama.expert_count") == 3);
  CHECK(m->metadata().get_int("llama.expert_used_count") == 2);
  size_t gi = 0, di = 0, ri = 0;
  const auto* gate = find(*m, "blk.0.ffn_gate_exps.weight", &gi);
  REQUIRE(gate);
  CHECK(gate->shape == std::vector<int64_t>{8, 16, 3});
  CHECK(gate->type == sy::StorageType::BF16);
  const auto g = read_all(*m, gi);
  for (size_t e = 0; e < 3; ++e)
    for (size_t r = 0; r < 16; ++r) CHECK(bf16_at(g, (e * 16 + r) * 8) == 20.0f * static_cast<float>(e) + static_cast<float>(r));
  REQUIRE(find(*m, "blk.0.ffn_down_exps.weight", &di));
  CHECK(m->tensors()[di].shape == std::vector<int64_t>{16, 8, 3});
  CHECK(bf16_at(read_all(*m, di), 2 * 8 * 16) == 42.0f);  // expert 2, row 0
  CHECK_FALSE(m->view(gi).has_value());
  const auto* router = find(*m, "blk.0.ffn_gate_inp.weight", &ri);
  REQUIRE(router);
  CHECK(router->type == sy::StorageType::F32);

  // Without expert 1's w1 the folder is refused, naming the tensor that is missing.
  sy::test::TempDir broken;
  auto less = ts;
  less.erase(std::remove_if(less.begin(), less.end(), [](const StEntry& t) { return t.name.find("experts.1.w1") != std::string::npos; }),
             less.end());
  write_folder(broken.path(), cfg, less);
  CHECK_THAT(open_error(broken.path()),
             Catch::Contains("lacks expert 1 of blk.0.ffn_gate_exps.weight ('model.layers.0.block_sparse_moe.experts.1.w1.weight')"));
}

TEST_CASE("hf: transformers v5 fused experts are views in llama.cpp's fused layout", "[hf]") {
  sy::test::TempDir dir;
  json cfg = llama_config();
  cfg["architectures"] = {"Qwen3MoeForCausalLM"};
  cfg["num_experts"] = 2;
  cfg["num_experts_per_tok"] = 1;
  cfg["moe_intermediate_size"] = 4;
  cfg["norm_topk_prob"] = true;
  auto ts = llama_tensors();
  ts.erase(std::remove_if(ts.begin(), ts.end(), [](const StEntry& t) { return t.name.find(".mlp.") != std::string::npos; }),
           ts.end());
  ts.push_back(matrix("model.layers.0.mlp.gate.weight", 2, 8));
  ts.push_back({"model.layers.0.mlp.experts.gate_up_proj", "BF16", {2, 8, 8}, sy::test::bf16_values(128, [](size_t i) { return static_cast<float>(i / 8); })});
  ts.push_back({"model.layers.0.mlp.experts.down_proj", "BF16", {2, 8, 4}, sy::test::bf16_values(64, [](size_t) { return 1.0f; })});
  write_folder(dir.path(), cfg, ts);
  auto m = open_ok(dir.path());
  size_t gu = 0, dn = 0;
  REQUIRE(find(*m, "blk.0.ffn_gate_up_exps.weight", &gu));
  CHECK(m->tensors()[gu].shape == std::vector<int64_t>{8, 8, 2});  // [H, 2I, E]: gate rows then up rows
  REQUIRE(find(*m, "blk.0.ffn_down_exps.weight", &dn));
  CHECK(m->tensors()[dn].shape == std::vector<int64_t>{4, 8, 2});
  CHECK(m->view(gu).has_value());
  CHECK(m->view(dn).has_value());
}

TEST_CASE("hf: a sharded checkpoint opens through its index", "[hf]") {
  sy::test::TempDir dir;
  const auto ts = llama_tensors();
  const std::vector<StEntry> first(ts.begin(), ts.begin() + 5), second(ts.begin() + 5, ts.end());
  sy::test::write_file(dir / "config.json", llama_config().dump());
  sy::test::write_bytes(dir / "model-00001-of-00002.safetensors", sy::test::safetensors_bytes(first));
  sy::test::write_bytes(dir / "model-00002-of-00002.safetensors", sy::test::safetensors_bytes(second));
  json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", json::object()}};
  for (const auto& t : first) index["weight_map"][t.name] = "model-00001-of-00002.safetensors";
  for (const auto& t : second) index["weight_map"][t.name] = "model-00002-of-00002.safetensors";
  sy::test::write_file(dir / "model.safetensors.index.json", index.dump());

  auto m = open_ok(dir.path());
  CHECK(m->checkpoint().shards.size() == 2);
  CHECK(m->tensors().size() == 12);
  size_t oi = 0;
  REQUIRE(find(*m, "blk.0.attn_output.weight", &oi));  // from the second shard
  CHECK(bf16_at(read_all(*m, oi), 7 * 8) == 7.0f);
  // Naming one shard opens the whole set.
  CHECK(open_ok(dir / "model-00002-of-00002.safetensors")->tensors().size() == 12);
  CHECK(sy::hf::probe_path(dir.path()) == sy::hf::kProbeUnquantized);

  SECTION("a tensor the index names but its shard lacks") {
    index["weight_map"]["model.layers.0.extra.weight"] = "model-00002-of-00002.safetensors";
    sy::test::write_file(dir / "model.safetensors.index.json", index.dump());
    CHECK_THAT(open_error(dir.path()),
               Catch::Contains("puts tensor 'model.layers.0.extra.weight' in shard 'model-00002-of-00002.safetensors', "
                               "but " + (dir / "model-00002-of-00002.safetensors").string() + " has no such tensor"));
  }
  SECTION("a missing shard") {
    fs::remove(dir / "model-00002-of-00002.safetensors");
    CHECK_THAT(open_error(dir.path()),
               Catch::Contains("in shard 'model-00002-of-00002.safetensors', but " +
                               (dir / "model-00002-of-00002.safetensors").string() + " is missing; download that shard"));
  }
  SECTION("a shard outside the folder") {
    index["weight_map"]["lm_head.weight"] = "../elsewhere.safetensors";
    sy::test::write_file(dir / "model.safetensors.index.json", index.dump());
    CHECK_THAT(open_error(dir.path()), Catch::Contains("is not a file name in this folder"));
  }
}

TEST_CASE("hf: quantized checkpoints are left to their own plugins", "[hf]") {
  const std::vector<std::pair<std::string, std::string>> methods = {
      {"awq", "awq"}, {"gptq", "gptq"}, {"fp8", "fp8"}, {"compressed-tensors", "fp8"}};
  for (const auto& [method, plugin] : methods) {
    INFO(method);
    sy::test::TempDir dir;
    json cfg = llama_config();
    cfg["quantization_config"] = {{"quant_method", method}};
    write_folder(dir.path(), cfg, llama_tensors());
    CHECK(sy::hf::probe_path(dir.path()) == sy::hf::kProbeQuantized);
    CHECK_THAT(open_error(dir.path()), Catch::Contains("the " + plugin + " format plugin reads it (model.format: " + plugin + ")"));
  }
  // An FP8 weight in a folder that does not say so is refused too.
  sy::test::TempDir dir;
  auto ts = llama_tensors();
  ts[5] = {ts[5].name, "F8_E4M3", {8, 8}, std::vector<unsigned char>(64, 0x38)};
  write_folder(dir.path(), llama_config(), ts);
  CHECK_THAT(open_error(dir.path()), Catch::Contains("is F8_E4M3, an FP8-quantized weight; the fp8 format plugin"));
}

TEST_CASE("hf: probe scores folders and safetensors files, nothing else", "[hf]") {
  sy::test::TempDir dir;
  write_folder(dir.path(), llama_config(), llama_tensors());
  CHECK(sy::hf::probe_path(dir.path()) == sy::hf::kProbeUnquantized);
  CHECK(sy::hf::probe_path(dir / "model.safetensors") == sy::hf::kProbeUnquantized);
  CHECK(sy::hf::probe_path(dir / "config.json") == 0);
  sy::test::write_file(dir / "m.gguf", std::string("GGUF\3\0\0\0", 8) + std::string(64, '\0'));
  CHECK(sy::hf::probe_path(dir / "m.gguf") == 0);
  sy::test::TempDir bare;  // safetensors without config.json
  sy::test::write_bytes(bare / "model.safetensors", sy::test::safetensors_bytes(llama_tensors()));
  CHECK(sy::hf::probe_path(bare.path()) == 0);
  CHECK_THAT(open_error(bare.path()), Catch::Contains("has no config.json"));
}

TEST_CASE("hf: unknown tensors and architectures are refused by name", "[hf]") {
  sy::test::TempDir dir;
  auto ts = llama_tensors();
  ts.push_back(vec("model.layers.0.self_attn.mystery.weight", 8, 1));
  write_folder(dir.path(), llama_config(), ts);
  CHECK_THAT(open_error(dir.path()),
             Catch::Contains("tensor 'model.layers.0.self_attn.mystery.weight' is not part of a LlamaForCausalLM"));
  sy::test::TempDir other;
  json cfg = llama_config();
  cfg["architectures"] = {"GPT2LMHeadModel"};
  write_folder(other.path(), cfg, llama_tensors());
  CHECK_THAT(open_error(other.path()), Catch::Contains("architecture 'GPT2LMHeadModel' is not one this reader maps"));
  cfg = llama_config();
  cfg.erase("hidden_size");
  write_folder(other.path(), cfg, llama_tensors());
  CHECK_THAT(open_error(other.path()), Catch::Contains("'hidden_size' is missing"));
}

TEST_CASE("hf: the chat template and default sampling come from the folder's configs", "[hf]") {
  sy::test::TempDir dir;
  write_folder(dir.path(), llama_config(), llama_tensors());
  sy::test::write_file(dir / "tokenizer_config.json", json({{"chat_template", "{{ messages }}"}}).dump());
  sy::test::write_file(dir / "generation_config.json", json({{"temperature", 0.6}, {"top_p", 0.95}, {"top_k", 20}}).dump());
  auto m = open_ok(dir.path());
  CHECK(m->metadata().get_string("tokenizer.chat_template") == "{{ messages }}");
  CHECK(m->metadata().get_float("general.sampling.temp") == Approx(0.6));
  CHECK(m->metadata().get_float("general.sampling.top_p") == Approx(0.95));
  CHECK(m->metadata().get_int("general.sampling.top_k") == 20);
  sy::test::write_file(dir / "generation_config.json", "{not json");
  CHECK_THAT(open_error(dir.path()), Catch::Contains("generation_config.json is not valid JSON"));
}

TEST_CASE("hf: Llama 3 rope scaling becomes rope_freqs.weight", "[hf]") {
  // Meta's formula: wavelengths under old_ctx / high_freq_factor keep their frequency
  // (factor 1), over old_ctx / low_freq_factor are divided by `factor`, and between,
  // 1 / ((1 - s) / factor + s) with s = (old_ctx / wavelength - low) / (high - low).
  // head_dim 4 gives two pairs: frequency 1 (wavelength 2 pi) and 10000^-0.5 (wavelength 628).
  const auto factors = [](int old_ctx) {
    sy::test::TempDir dir;
    json cfg = llama_config();
    cfg["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                           {"high_freq_factor", 4.0}, {"original_max_position_embeddings", old_ctx}};
    write_folder(dir.path(), cfg, llama_tensors());
    auto m = open_ok(dir.path());
    size_t i = 0;
    REQUIRE(find(*m, "rope_freqs.weight", &i));
    const auto b = read_all(*m, i);
    REQUIRE(b.size() == 8);
    std::array<float, 2> f{};
    std::memcpy(f.data(), b.data(), 8);
    return f;
  };
  const auto wide = factors(32);  // 2 pi < 32 / 4: kept; 628 > 32: divided by 8
  CHECK(wide[0] == 1.0f);
  CHECK(wide[1] == 8.0f);
  const auto narrow = factors(8);  // 8 / 4 < 2 pi < 8: interpolated
  const double s = (8 / (2 * 3.141592653589793) - 1) / 3;
  CHECK(narrow[0] == Approx(1 / ((1 - s) / 8 + s)).epsilon(1e-6));
  CHECK(narrow[1] == 8.0f);
}

// llama.cpp's converter docstring: transformers stores value heads grouped by key head,
// [G0_v0, G0_v1, G1_v0, G1_v1, G2_v0, G2_v1]; the GGUF tiles them, [G0_v0, G1_v0, G2_v0,
// G0_v1, G1_v1, G2_v1]. Three key heads make the order no involution, so a reversed
// mapping would fail here (the shared fixtures have two key heads, where it would not).
TEST_CASE("hf: Qwen3.5 value heads go from grouped to tiled order", "[hf]") {
  CHECK(sy::hf::tiled_value_rows(6, 0, 1, 3, 6) == std::vector<int64_t>{0, 2, 4, 1, 3, 5});
  // Rows of two per head after four leading rows (in_proj_qkv's q and k stay in place).
  CHECK(sy::hf::tiled_value_rows(10, 4, 2, 1, 3) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(sy::hf::tiled_value_rows(8, 0, 2, 2, 4) == std::vector<int64_t>{0, 1, 4, 5, 2, 3, 6, 7});
}

// Qwen3.5 configs keep rope settings in text_config.rope_parameters (transformers v5) or, as
// the Qwen-VL family did, in rope_scaling with type "mrope"; both give the sections and
// neox rope on the rotated dims.
TEST_CASE("hf: Qwen3.5's sectioned rope from rope_parameters or an mrope rope_scaling", "[hf]") {
  const json text = {{"hidden_size", 8},          {"num_hidden_layers", 4},       {"num_attention_heads", 2},
                     {"num_key_value_heads", 1},  {"head_dim", 8},                {"vocab_size", 16},
                     {"num_experts", 2},          {"num_experts_per_tok", 1},     {"moe_intermediate_size", 4},
                     {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 4},   {"linear_num_key_heads", 1},
                     {"linear_num_value_heads", 2}, {"rope_theta", 1e7},          {"partial_rotary_factor", 0.5}};
  for (const char* where : {"rope_parameters", "rope_scaling"}) {
    INFO(where);
    json t = text;
    t[where] = {{std::string(where) == "rope_scaling" ? "type" : "rope_type",
                 std::string(where) == "rope_scaling" ? "mrope" : "default"},
                {"mrope_section", {1, 1, 0}}};
    auto c = sy::hf::read_config({{"architectures", {"Qwen3_5MoeForConditionalGeneration"}}, {"text_config", t}},
                                 "config.json");
    INFO((c ? std::string() : c.status().message()));
    REQUIRE(c.has_value());
    const auto* v = c->md.find("qwen35moe.rope.dimension_sections");
    REQUIRE(v);
    const auto& a = std::get<sy::MetaArray>(*v);
    REQUIRE(a.items.size() == 4);
    CHECK(sy::meta_as_int(a.items[0]) == 1);
    CHECK(sy::meta_as_int(a.items[2]) == 0);
    CHECK(c->md.get_int("qwen35moe.rope.dimension_count") == 4);
    CHECK(c->md.get_int("qwen35moe.ssm.time_step_rank") == 2);
  }
}
