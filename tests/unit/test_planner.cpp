// The planner and placement against hand computations: KV bytes, recurrent state and
// weight bytes of qwen3.6-35b-a3b and qwen3-30b-a3b written out from their published
// shapes; placement rule precedence; auto-fit within every budget it reports as fitting.
#include <catch2/catch.hpp>

#include "placement/placement.hpp"
#include "planner/planner.hpp"
#include "synth/synth.hpp"

using namespace sy;

namespace {

constexpr uint64_t GiB = 1ull << 30;

planner::ModelDesc topology(const std::string& name, const std::string& type) {
  auto t = synth::builtin_topology(name);
  REQUIRE(t);
  auto m = synth::describe(*t, type);
  REQUIRE(m);
  return std::move(*m);
}

// Storage by hand: Q8_0 stores 32 values in 34 bytes, F32 4 bytes each.
constexpr uint64_t q8(uint64_t n) { return n / 32 * 34; }
constexpr uint64_t f32(uint64_t n) { return 4 * n; }

uint64_t total_weights(const planner::ModelDesc& m) {
  uint64_t b = 0;
  for (const auto& t : m.tensors) b += t.bytes;
  return b;
}

StorageType type_of(const planner::ModelDesc& m, const std::string& name) {
  for (const auto& t : m.tensors)
    if (t.name == name) return t.type;
  FAIL("no tensor " << name);
  return StorageType::F32;
}

std::vector<planner::DeviceSpec> gpu_and_cpu(uint64_t vram, uint64_t ram) {
  return {{"gpu0", true, vram, 900e9, "given"}, {"cpu", false, ram, 50e9, "given"}};
}

}  // namespace

TEST_CASE("planner: qwen3.6-35b-a3b KV and recurrent state by hand", "[planner]") {
  const auto m = topology("qwen3.6-35b-a3b", "q4_k_m");
  REQUIRE(m.hp.n_layer == 40);
  REQUIRE(m.hp.n_full_attention_layers() == 10);
  // 2 (K, V) x 10 full-attention layers x 2 KV heads x 256 head size x bytes per element.
  CHECK(planner::kv_bytes_per_token(m.hp, StorageType::F16) == 2 * 10 * 2 * 256 * 2);         // 20480
  CHECK(planner::kv_bytes_per_token(m.hp, StorageType::F32) == 2 * 10 * 2 * 256 * 4);         // 40960
  CHECK(planner::kv_bytes_per_token(m.hp, StorageType::Q8_0) == 2 * 10 * (2 * 256 / 32 * 34));  // 10880
  CHECK(planner::kv_bytes_per_token(m.hp, StorageType::Q4_0) == 2 * 10 * (2 * 256 / 32 * 18));  // 5760
  // 30 linear layers x (conv: (4-1) x (2 x 16 x 128 + 32 x 128) + delta: 32 x 128 x 128) x 4 bytes.
  CHECK(planner::recurrent_bytes_per_sequence(m.hp) == 30ull * (3 * (2 * 16 * 128 + 32 * 128) + 32 * 128 * 128) * 4);
  CHECK(planner::recurrent_bytes_per_sequence(m.hp) == 65863680);

  // Everything on the CPU: KV for 32768 x 4 sequences, state for 4.
  const std::vector<planner::DeviceSpec> cpu{{"cpu", false, 64 * GiB, 50e9, "given"}};
  auto p = placement::place(m, cpu, {}, {0, 0});
  REQUIRE(p);
  planner::Request r;
  r.ctx = 32768, r.parallel = 4;
  auto u = planner::account(m, p->assignment, cpu, r);
  CHECK(u[0].kv == 20480ull * 32768 * 4);  // 2.5 GiB
  CHECK(u[0].recurrent == 65863680ull * 4);
  CHECK(u[0].weights == total_weights(m));
  CHECK(u[0].overhead == planner::kCpuOverheadBytes);
  // A context that is not a whole number of 32-position blocks is rounded up: 1000 -> 1024.
  r.ctx = 1000, r.parallel = 1, r.kv_type = StorageType::Q8_0;
  CHECK(planner::account(m, p->assignment, cpu, r)[0].kv == 10880ull * 1024);
}

TEST_CASE("planner: qwen3-30b-a3b KV by hand", "[planner]") {
  const auto m = topology("qwen3-30b-a3b", "q8_0");
  // 48 full-attention layers, 4 KV heads of 128.
  CHECK(planner::kv_bytes_per_token(m.hp, StorageType::F16) == 2 * 48 * 4 * 128 * 2);  // 98304
  CHECK(planner::kv_bytes_per_token(m.hp, StorageType::Q8_0) == 2 * 48 * (512 / 32 * 34));
  CHECK(planner::kv_bytes_per_token(m.hp, StorageType::Q4_0) == 2 * 48 * (512 / 32 * 18));
  CHECK(planner::recurrent_bytes_per_sequence(m.hp) == 0);
  // 8K x 2 sequences of f16 KV: 1.5 GiB.
  const std::vector<planner::DeviceSpec> cpu{{"cpu", false, 64 * GiB, 50e9, "given"}};
  auto p = placement::place(m, cpu, {}, {0, 0});
  REQUIRE(p);
  planner::Request r;
  r.ctx = 8192, r.parallel = 2;
  CHECK(planner::account(m, p->assignment, cpu, r)[0].kv == 98304ull * 8192 * 2);
}

TEST_CASE("planner: weight bytes of the Q8_0 mixes by hand", "[planner]") {
  {
    const uint64_t E = 2048, V = 151936, L = 48, H = 32, KV = 4, hd = 128, X = 128, F = 768;
    const uint64_t layer = 2 * f32(E) + q8(E * H * hd) + 2 * q8(E * KV * hd) + q8(H * hd * E) + 2 * f32(hd) +
                           f32(E * X) + 3 * q8(E * F * X);
    const uint64_t expected = 2 * q8(E * V) + f32(E) + L * layer;
    CHECK(total_weights(topology("qwen3-30b-a3b", "q8_0")) == expected);
  }
  {
    const uint64_t E = 2048, V = 248320, X = 256, F = 512;
    const uint64_t moe = 2 * f32(E) + f32(E * X) + 3 * q8(E * F * X) + f32(E) + 3 * q8(E * F);
    const uint64_t full = q8(E * 16 * 256 * 2) + 2 * q8(E * 2 * 256) + q8(16 * 256 * E) + 2 * f32(256);
    const uint64_t linear = q8(E * 8192) + q8(E * 4096) + f32(4 * 8192) + f32(32) + f32(32) + 2 * q8(E * 32) +
                            f32(128) + q8(4096 * E);
    const uint64_t expected = 2 * q8(E * V) + f32(E) + 40 * moe + 10 * full + 30 * linear;
    CHECK(total_weights(topology("qwen3.6-35b-a3b", "q8_0")) == expected);
  }
}

TEST_CASE("planner: a GPU + RAM split of qwen3-30b-a3b Q8_0 by hand", "[planner]") {
  const auto m = topology("qwen3-30b-a3b", "q8_0");
  const uint64_t E = 2048, V = 151936, X = 128, F = 768;
  const uint64_t experts_per_layer = 3 * q8(E * F * X), embd = q8(E * V);
  const auto devs = gpu_and_cpu(24 * GiB, 64 * GiB);
  // Every layer and the head on the GPU, the experts of layers 0-9 in RAM; 16K x 2 of q8_0 KV.
  auto p = placement::place(m, devs, {}, {49, 10});
  REQUIRE(p);
  planner::Request r;
  r.ctx = 16384, r.parallel = 2, r.kv_type = StorageType::Q8_0, r.ubatch = 256;
  const auto u = planner::account(m, p->assignment, devs, r);
  CHECK(u[1].weights == embd + 10 * experts_per_layer);
  CHECK(u[1].expert_weights == 10 * experts_per_layer);
  CHECK(u[0].weights == total_weights(m) - embd - 10 * experts_per_layer);
  CHECK(u[0].expert_weights == 38 * experts_per_layer);
  CHECK(u[0].kv == 2ull * 48 * (4 * 128 / 32 * 34) * 16384 * 2);  // all KV with the layers, on the GPU
  CHECK(u[1].kv == 0);
  CHECK(u[0].overhead == 512ull << 20);
  CHECK(u[1].overhead == 256ull << 20);
  // Compute: 256 tokens x 4 bytes x (3 x 2048 + the widest branch, the experts:
  // 8 x (3 x 768 + 2048) + 2 x 128 router values); logits for 2 sequences on the GPU.
  CHECK(u[0].compute == 256ull * 4 * (3 * 2048 + 8 * (3 * 768 + 2048) + 2 * 128) + 2ull * 151936 * 4);
  CHECK(u[1].compute == 256ull * 4 * (3 * 2048 + 8 * (3 * 768 + 2048) + 2 * 128));  // the CPU runs experts too
}

TEST_CASE("planner: caches follow their layers when qwen3.6 is split at layer 20", "[planner]") {
  const auto m = topology("qwen3.6-35b-a3b", "q4_k_m");
  const auto devs = gpu_and_cpu(24 * GiB, 64 * GiB);
  auto p = placement::place(m, devs, {}, {20, 0});  // layers 20-39 on the GPU, the head in RAM
  REQUIRE(p);
  planner::Request r;
  r.ctx = 8192, r.parallel = 3;
  const auto u = planner::account(m, p->assignment, devs, r);
  // Full-attention layers 3, 7, ... 39: five on each side. Per layer and token, f16 K and V:
  // 2 x 2 heads x 256 x 2 bytes = 2048.
  CHECK(u[0].kv == 5ull * 2048 * 8192 * 3);
  CHECK(u[1].kv == 5ull * 2048 * 8192 * 3);
  // Fifteen delta-net layers on each side, (3 x 8192 + 32 x 128 x 128) x 4 bytes each.
  CHECK(u[0].recurrent == 15ull * (3 * 8192 + 32 * 128 * 128) * 4 * 3);
  CHECK(u[1].recurrent == 15ull * (3 * 8192 + 32 * 128 * 128) * 4 * 3);
  CHECK(p->assignment.output_device == 1);
  // The head's logits are computed in RAM: 3 rows of 248320.
  CHECK(u[1].compute - u[0].compute == 3ull * 248320 * 4);
}

TEST_CASE("planner: the Q4_K_M mix follows llama.cpp's rule", "[planner]") {
  const auto m = topology("qwen3-30b-a3b", "q4_k_m");
  CHECK(type_of(m, "output.weight") == StorageType::Q6_K);
  CHECK(type_of(m, "token_embd.weight") == StorageType::Q4_K);
  CHECK(type_of(m, "blk.0.ffn_gate_inp.weight") == StorageType::F32);
  CHECK(type_of(m, "blk.0.attn_norm.weight") == StorageType::F32);
  CHECK(type_of(m, "blk.9.attn_q.weight") == StorageType::Q4_K);
  // use_more_bits(i, 48): i < 6, i >= 42, or (i - 6) % 3 == 2.
  for (int il : {0, 5, 8, 11, 41, 42, 47}) {
    CHECK(type_of(m, "blk." + std::to_string(il) + ".attn_v.weight") == StorageType::Q6_K);
    CHECK(type_of(m, "blk." + std::to_string(il) + ".ffn_down_exps.weight") == StorageType::Q6_K);
  }
  for (int il : {6, 7, 9, 10, 40}) {
    CHECK(type_of(m, "blk." + std::to_string(il) + ".attn_v.weight") == StorageType::Q4_K);
    CHECK(type_of(m, "blk." + std::to_string(il) + ".ffn_down_exps.weight") == StorageType::Q4_K);
  }
  // Qwen3.6: attn_v exists in the 10 full-attention layers only and is counted among them:
  // use_more_bits(i, 10) picks i = 0, 3, 6, 8, 9, the layers 3, 15, 27, 35, 39.
  const auto q = topology("qwen3.6-35b-a3b", "q4_k_m");
  for (int il = 3; il < 40; il += 4) {
    const bool more = il == 3 || il == 15 || il == 27 || il == 35 || il == 39;
    CHECK(type_of(q, "blk." + std::to_string(il) + ".attn_v.weight") == (more ? StorageType::Q6_K : StorageType::Q4_K));
  }
  CHECK(type_of(q, "blk.0.attn_qkv.weight") == StorageType::Q5_K);
}

TEST_CASE("placement: overrides beat cpu_moe, which beats gpu_layers", "[placement]") {
  const auto m = topology("qwen3-30b-a3b", "q8_0");
  const auto devs = gpu_and_cpu(24 * GiB, 64 * GiB);
  const std::vector<pipeline::OverrideRule> rules{{"blk\\.5\\.ffn_up_exps", "gpu0", {}},
                                                  {"blk\\.2[0-9]\\.ffn_.*_exps", "cpu", {}},
                                                  {"blk\\.25\\.", "gpu0", {}}};
  auto p = placement::place(m, devs, rules, {49, 10});
  REQUIRE(p);
  auto dev = [&](const std::string& name) {
    for (size_t i = 0; i < m.tensors.size(); ++i)
      if (m.tensors[i].name == name) return devs[static_cast<size_t>(p->assignment.tensor_device[i])].name;
    return std::string("missing");
  };
  CHECK(dev("blk.5.ffn_up_exps.weight") == "gpu0");     // override over cpu_moe
  CHECK(dev("blk.5.ffn_gate_exps.weight") == "cpu");    // cpu_moe 10
  CHECK(dev("blk.9.ffn_down_exps.weight") == "cpu");
  CHECK(dev("blk.10.ffn_down_exps.weight") == "gpu0");  // past cpu_moe
  CHECK(dev("blk.25.ffn_down_exps.weight") == "cpu");   // the first matching override wins
  CHECK(dev("blk.25.attn_q.weight") == "gpu0");
  CHECK(dev("blk.5.attn_q.weight") == "gpu0");          // cpu_moe moves experts only
  CHECK(dev("token_embd.weight") == "cpu");
  CHECK(dev("output.weight") == "gpu0");                // 49 = 48 layers + the output head

  // gpu_layers 10: the last 10 layers; the head stays in RAM until every layer is on the GPU.
  p = placement::place(m, devs, {}, {10, 0});
  REQUIRE(p);
  CHECK(dev("blk.37.attn_q.weight") == "cpu");
  CHECK(dev("blk.38.attn_q.weight") == "gpu0");
  CHECK(dev("output.weight") == "cpu");
  CHECK(p->assignment.layer_device[37] == 1);
  CHECK(p->assignment.layer_device[38] == 0);
  p = placement::place(m, devs, {}, {48, 0});
  REQUIRE(p);
  CHECK(dev("blk.0.attn_q.weight") == "gpu0");
  CHECK(dev("output.weight") == "cpu");

  // Two GPUs share the layers in proportion to their budgets (24 : 8 -> 36 : 12).
  const std::vector<planner::DeviceSpec> two{{"gpu0", true, 24 * GiB, 1e12, ""}, {"gpu1", true, 8 * GiB, 1e12, ""},
                                             {"cpu", false, 64 * GiB, 5e10, ""}};
  p = placement::place(m, two, {}, {49, 0});
  REQUIRE(p);
  CHECK(std::count(p->assignment.layer_device.begin(), p->assignment.layer_device.end(), 0) == 36);
  CHECK(std::count(p->assignment.layer_device.begin(), p->assignment.layer_device.end(), 1) == 12);

  auto bad = placement::place(m, devs, {{"blk\\.1\\.", "gpu7", {}}}, {49, 0});
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.status().message(), Catch::Contains("gpu7") && Catch::Contains("gpu0, cpu"));
}

TEST_CASE("placement: headroom is max(10%, 1 GiB) of each budget", "[placement]") {
  pipeline::PlacementConfig cfg;
  CHECK(placement::usable_bytes(cfg, 24 * GiB) == 24 * GiB - static_cast<uint64_t>(0.1 * 24 * GiB));
  CHECK(placement::usable_bytes(cfg, 8 * GiB) == 7 * GiB);
  CHECK(placement::usable_bytes(cfg, GiB / 2) == 0);
}

TEST_CASE("placement: auto-fit never exceeds a budget and moves experts to RAM first", "[placement]") {
  for (const char* name : {"qwen3.6-35b-a3b", "qwen3-30b-a3b"}) {
    const auto m = topology(name, "q4_k_m");
    const int64_t L = m.hp.n_layer;
    pipeline::PlacementConfig cfg;  // gpu_layers auto, cpu_moe searched
    for (uint64_t vram : {4ull, 8ull, 12ull, 16ull, 24ull, 32ull, 48ull}) {
      for (int64_t ctx : {4096, 32768, 131072}) {
        for (int64_t par : {1, 4}) {
          INFO(name << " vram " << vram << " GiB, ctx " << ctx << " x " << par);
          const auto devs = gpu_and_cpu(vram * GiB, 64 * GiB);
          planner::Request r;
          r.ctx = ctx, r.parallel = par;
          auto f = placement::fit(m, devs, cfg, true, r);
          REQUIRE(f);
          if (!f->fits) continue;
          for (size_t d = 0; d < devs.size(); ++d) CHECK(f->usage[d].total() <= placement::usable_bytes(cfg, devs[d].budget));
          const auto c = f->placed.choice;
          auto fits_with = [&](placement::Choice ch) {
            auto p = placement::place(m, devs, {}, ch);
            REQUIRE(p);
            return placement::fits(planner::account(m, p->assignment, devs, r), devs, cfg);
          };
          if (c.gpu_layers == L + 1) {
            if (c.cpu_moe > 0) CHECK_FALSE(fits_with({L + 1, c.cpu_moe - 1}));  // the fewest experts in RAM
          } else {
            CHECK(c.cpu_moe == L);  // layers leave the GPU only once every expert has
            CHECK_FALSE(fits_with({c.gpu_layers + 1, L}));
          }
        }
      }
    }
  }
}
