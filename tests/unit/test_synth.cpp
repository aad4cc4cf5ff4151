// synth files: the intended tensors and shapes, a size equal to the sum of the tensors'
// sizes from the storage-type table, deterministic bytes, zero-mean quantized blocks with
// the intended scale, finite logits, and routing spread over every expert.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <random>

#include "engine/routing_stats.hpp"
#include "engine_support.hpp"
#include "mapped_file.hpp"
#include "parse.hpp"
#include "planner/planner.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"
#include "synth/layout.hpp"
#include "synth/mix.hpp"
#include "synth/synth.hpp"

using namespace sy;
namespace fs = std::filesystem;

namespace {

synth::Topology scaled(const std::string& name, int64_t layers, int64_t experts, int64_t vocab) {
  auto t = synth::builtin_topology(name);
  REQUIRE(t);
  REQUIRE(synth::scale_topology(*t, layers, experts, vocab));
  return *t;
}

fs::path write(const test::TempDir& dir, const synth::Topology& t, const std::string& type, uint64_t seed = 42,
               int threads = 0) {
  const fs::path p = dir / (t.name + "-" + type + "-" + std::to_string(seed) + "-" + std::to_string(threads) + ".gguf");
  synth::SynthOptions o;
  o.type = type, o.seed = seed, o.threads = threads;
  auto st = synth::write_synth_model(p, t, o);
  INFO(st.message());
  REQUIRE(st);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("synth: every built-in topology, scaled, has its shapes and the size its tensors add up to", "[synth]") {
  test::TempDir dir;
  for (const std::string name : {"qwen3.6-35b-a3b", "qwen3-30b-a3b", "qwen3-0.6b", "qwen3-8b", "llama-3.1-8b", "mixtral-8x7b"}) {
    for (const std::string type : {"q4_k_m", "q8_0"}) {
      if (type == "q8_0" && name != "qwen3.6-35b-a3b" && name != "qwen3-0.6b") continue;  // keeps CI's disk writes small
      INFO(name << " " << type);
      const bool hybrid = name == "qwen3.6-35b-a3b", moe = hybrid || name == "qwen3-30b-a3b" || name == "mixtral-8x7b";
      const auto t = scaled(name, hybrid ? 4 : 1, moe ? 2 : 0, 512);
      const fs::path p = write(dir, t, type);
      auto mf = gguf::MappedFile::open(p);
      REQUIRE(mf);
      auto f = gguf::parse((*mf)->bytes(), p.string());
      REQUIRE(f);
      const auto specs = synth::model_layout(t).tensors;
      REQUIRE(f->tensors.size() == specs.size());
      uint64_t end = f->data_offset;
      for (size_t i = 0; i < specs.size(); ++i) {
        const auto& d = f->tensors[i].desc;
        CHECK(d.name == specs[i].name);
        CHECK(d.shape == specs[i].shape);
        // Size from the storage-type table: elements / block size x block bytes.
        const auto& info = storage_type_info(d.type);
        uint64_t n = 1;
        for (auto v : d.shape) n *= static_cast<uint64_t>(v);
        REQUIRE(n % info.block_size == 0);
        const uint64_t bytes = n / info.block_size * info.block_bytes;
        CHECK(d.bytes == bytes);
        CHECK(f->tensors[i].offset == end - f->data_offset);
        end += (bytes + f->alignment - 1) / f->alignment * f->alignment;
      }
      CHECK(fs::file_size(p) == end);
      // The shapes are the topology's: the first layer's attention and experts.
      if (name == "qwen3.6-35b-a3b") {
        for (const auto& ti : f->tensors) {
          if (ti.desc.name == "blk.3.attn_q.weight") CHECK(ti.desc.shape == std::vector<int64_t>{2048, 8192});
          if (ti.desc.name == "blk.0.attn_qkv.weight") CHECK(ti.desc.shape == std::vector<int64_t>{2048, 8192});
          if (ti.desc.name == "blk.0.ffn_up_exps.weight") CHECK(ti.desc.shape == std::vector<int64_t>{2048, 512, 2});
        }
      }
      // It loads and runs: finite logits for a short prompt and 4 greedy tokens.
      auto rt = test::bring_up_model(p, {"f16", 64, 1, 64});
      auto logits = test::teacher_forced(*rt->engine, 0, {1, 300, 301, 302, 303}, {304, 305, 306, 307});
      for (const auto& row : logits)
        for (float v : row) REQUIRE(std::isfinite(v));
    }
  }
}

TEST_CASE("synth: bytes depend on the seed only, not on threads", "[synth]") {
  test::TempDir dir;
  const auto t = scaled("qwen3-30b-a3b", 2, 8, 512);
  const auto a = slurp(write(dir, t, "q4_k_m", 7, 1));
  CHECK(a == slurp(write(dir, t, "q4_k_m", 7, 2)));
  CHECK(a != slurp(write(dir, t, "q4_k_m", 8, 2)));
}

TEST_CASE("synth: quantized blocks are zero-mean with the intended scale", "[synth]") {
  test::TempDir dir;
  const auto t = scaled("qwen3-0.6b", 1, 0, 512);
  for (const std::string type : {"q4_k", "q4_0", "q6_k", "q8_0", "iq4_nl", "q2_k", "f16"}) {
    INFO(type);
    const fs::path p = write(dir, t, type);
    auto mf = gguf::MappedFile::open(p);
    REQUIRE(mf);
    auto f = gguf::parse((*mf)->bytes(), p.string());
    REQUIRE(f);
    for (const auto& ti : f->tensors) {
      if (ti.desc.name != "blk.0.ffn_up.weight") continue;
      const int64_t row = ti.desc.shape[0], rows = ti.desc.shape[1];
      const uint64_t row_bytes = *storage_row_bytes(ti.desc.type, static_cast<uint64_t>(row));
      std::vector<float> x(static_cast<size_t>(row));
      double sum = 0, sq = 0, row_mean_sq = 0;
      for (int64_t r = 0; r < rows; ++r) {
        REQUIRE(dequantize_row(ti.desc.type, (*mf)->bytes().data() + f->data_offset + ti.offset + static_cast<uint64_t>(r) * row_bytes,
                               x.data(), row));
        double rs = 0;
        for (float v : x) sum += v, sq += double(v) * v, rs += v;
        row_mean_sq += (rs / static_cast<double>(row)) * (rs / static_cast<double>(row));
      }
      const double n = static_cast<double>(row * rows), mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
      const double sigma = 1.0 / std::sqrt(static_cast<double>(row));  // a linear layer: N(0, 1/fan_in)
      REQUIRE(row * rows == 1024 * 3072);
      CHECK(std::abs(mean) < 0.01 * sigma);
      CHECK(sd == Approx(sigma).epsilon(0.12));
      // No row leans one way: the rms of the row means is what independent draws give.
      CHECK(std::sqrt(row_mean_sq / static_cast<double>(rows)) < 3 * sigma / std::sqrt(static_cast<double>(row)));
    }
  }
}

TEST_CASE("synth: routing uses every expert and the busiest gets at most 4x the mean", "[synth]") {
  test::TempDir dir;
  // The real hidden size, router and expert width of Qwen3-30B-A3B; fewer layers and experts.
  const fs::path p = write(dir, scaled("qwen3-30b-a3b", 2, 32, 4096), "q4_k_m");
  auto rt = test::bring_up_model(p, {"f16", 1024, 1, 512, true});
  std::mt19937 rng(7);
  std::vector<engine::BatchToken> batch;
  for (int i = 0; i < 512; ++i) batch.push_back({0, static_cast<int32_t>(300 + rng() % 3700), i == 511});
  REQUIRE(rt->engine->kv().add(0));
  std::vector<float> logits;
  REQUIRE(rt->engine->decode(batch, logits));
  const auto s = engine::summarize_routing(rt->engine->routing_counts());
  REQUIRE(s.layers.size() == 2);
  CHECK(s.picks_per_layer == 512 * 8);
  CHECK(s.fewest_experts_chosen == 32);
  CHECK(s.worst_max_over_mean <= 4.0);
}

TEST_CASE("synth: the planner's KV bytes and compute estimate match the engine's own", "[synth][planner]") {
  test::TempDir dir;
  for (const std::string name : {"demo", "demo-llama"}) {
    auto t = synth::builtin_topology(name);
    REQUIRE(t);
    const fs::path p = write(dir, *t, "q8_0");
    auto desc = synth::describe(*t, "q8_0");
    REQUIRE(desc);
    for (const std::string kv : {"f16", "q8_0"}) {
      auto rt = test::bring_up_model(p, {kv, 256, 2, 64});
      const StorageType kt = kv == "f16" ? StorageType::F16 : StorageType::Q8_0;
      CHECK(planner::kv_bytes_per_token(desc->hp, kt) == rt->engine->kv().bytes_per_token());
      (void)test::greedy(*rt->engine, 0, std::vector<int32_t>(64, 300), 4);
      planner::Request r;
      r.ubatch = 64, r.parallel = 2;
      INFO(name << " arena peak " << rt->engine->stats().arena_peak_bytes);
      CHECK(rt->engine->stats().arena_peak_bytes <= planner::compute_bytes(desc->hp, r, true, true));
    }
  }
}

TEST_CASE("synth: bad topologies and scaling are clear errors", "[synth]") {
  test::TempDir dir;
  auto t = synth::builtin_topology("qwen3.6-35b-a3b");
  REQUIRE(t);
  auto st = synth::scale_topology(*t, 6, 0, 0);
  REQUIRE_FALSE(st);
  CHECK_THAT(st.message(), Catch::Contains("multiple of 4"));
  CHECK_THAT(synth::builtin_topology("gpt5").status().message(), Catch::Contains("qwen3-30b-a3b"));
  CHECK_THAT(synth::parse_type_mix("q9_z").status().message(), Catch::Contains("q4_k_m"));
  const fs::path bad = dir / "bad.json";
  test::write_file(bad, R"({"format": "tensorfs-topology-v2", "components": [{"tensors": {"x": [1]}}]})");
  auto r = synth::load_topology_file(bad);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.status().message(), Catch::Contains("bad.json") && Catch::Contains("embed_tokens"));
  test::write_file(bad, "{not json");
  CHECK_THAT(synth::load_topology_file(bad).status().message(), Catch::Contains("is not valid JSON"));
}

TEST_CASE("synth: every storage type with a CPU kernel writes a model that runs", "[synth]") {
  test::TempDir dir;
  auto t = synth::builtin_topology("demo-llama");
  REQUIRE(t);
  for (const std::string type : {"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k", "q4_k",
                                  "q5_k", "q6_k", "iq4_nl", "iq4_xs", "q4_k_m", "q5_k_m"}) {
    INFO(type);
    const fs::path p = write(dir, *t, type);
    auto rt = test::bring_up_model(p, {"f16", 64, 1, 64});
    CHECK(rt->model->weights().converted() == 0);  // stored as written, computed natively
    auto logits = test::teacher_forced(*rt->engine, 0, {1, 300, 301}, {302, 303});
    for (const auto& row : logits)
      for (float v : row) REQUIRE(std::isfinite(v));
  }
}

TEST_CASE("routing statistics count every token and leave the logits unchanged", "[synth][engine]") {
  test::TempDir dir;
  auto t = synth::builtin_topology("demo");
  REQUIRE(t);
  const fs::path p = write(dir, *t, "q8_0");
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(300 + (i * 37) % 200);
  auto plain = test::bring_up_model(p, {"f16", 128, 1, 16});
  auto counted = test::bring_up_model(p, {"f16", 128, 1, 16, true});
  const auto a = test::teacher_forced(*plain->engine, 0, prompt, {301, 302, 303});
  const auto b = test::teacher_forced(*counted->engine, 0, prompt, {301, 302, 303});
  CHECK(a == b);  // bit for bit: only which rows run the last layer changes
  const auto& counts = counted->engine->routing_counts();
  REQUIRE(counts.size() == 4);  // every layer of the demo is MoE
  for (const auto& layer : counts) {
    uint64_t picks = 0;
    for (auto c : layer) picks += c;
    CHECK(picks == (prompt.size() + 3) * 2);  // every token (prompt and forced), 2 experts each
  }
  CHECK(plain->engine->routing_counts().empty());
}

TEST_CASE("synth: topology files of Qwen3-MoE and Mixtral naming give their shapes", "[synth]") {
  test::TempDir dir;
  // Qwen3-MoE as transformers names it: per-expert projections, q/k norms.
  nlohmann::json q;
  q["format"] = "tensorfs-topology-v2";
  auto& qt = q["components"][0]["tensors"];
  qt["model.embed_tokens.weight"] = {1000, 256};
  qt["lm_head.weight"] = {1000, 256};
  for (int il = 0; il < 2; ++il) {
    const std::string p = "model.layers." + std::to_string(il) + ".";
    qt[p + "self_attn.q_proj.weight"] = {8 * 64, 256};
    qt[p + "self_attn.k_proj.weight"] = {2 * 64, 256};
    qt[p + "self_attn.v_proj.weight"] = {2 * 64, 256};
    qt[p + "self_attn.o_proj.weight"] = {256, 8 * 64};
    qt[p + "self_attn.q_norm.weight"] = {64};
    qt[p + "mlp.gate.weight"] = {16, 256};
    for (int e = 0; e < 16; ++e) qt[p + "mlp.experts." + std::to_string(e) + ".gate_proj.weight"] = {96, 256};
  }
  test::write_file(dir / "q.json", q.dump());
  auto t = synth::load_topology_file(dir / "q.json");
  INFO(t.status().message());
  REQUIRE(t);
  CHECK(t->arch == "qwen3moe");
  CHECK(t->n_layer == 2);
  CHECK(t->n_head == 8);
  CHECK(t->n_head_kv == 2);
  CHECK(t->head_dim == 64);
  CHECK(t->n_expert == 16);
  CHECK(t->n_expert_used == 8);
  CHECK(t->n_ff_exp == 96);
  CHECK_FALSE(t->tied_embeddings);

  // Mixtral: block_sparse_moe, no q/k norms; the head size comes from the config.
  nlohmann::json m;
  m["format"] = "tensorfs-topology-v2";
  m["config"] = {{"num_attention_heads", 8}, {"num_experts_per_tok", 2}};
  auto& mt = m["components"][0]["tensors"];
  mt["model.embed_tokens.weight"] = {1000, 256};
  const std::string p = "model.layers.0.";
  mt[p + "self_attn.q_proj.weight"] = {256, 256};
  mt[p + "self_attn.k_proj.weight"] = {64, 256};
  mt[p + "self_attn.o_proj.weight"] = {256, 256};
  mt[p + "block_sparse_moe.gate.weight"] = {4, 256};
  mt[p + "block_sparse_moe.experts.0.w1.weight"] = {384, 256};
  test::write_file(dir / "m.json", m.dump());
  t = synth::load_topology_file(dir / "m.json");
  INFO(t.status().message());
  REQUIRE(t);
  CHECK(t->arch == "llama");
  CHECK(t->head_dim == 32);
  CHECK(t->n_head == 8);
  CHECK(t->n_head_kv == 2);
  CHECK(t->n_expert == 4);
  CHECK(t->n_expert_used == 2);
  CHECK(t->n_ff_exp == 384);
  CHECK(t->tied_embeddings);
  // And it is a model the engine runs.
  const fs::path gguf = write(dir, *t, "q8_0");
  auto rt = test::bring_up_model(gguf, {"f16", 64, 1, 64});
  for (const auto& row : test::teacher_forced(*rt->engine, 0, {1, 300, 301}, {302}))
    for (float v : row) REQUIRE(std::isfinite(v));
}
