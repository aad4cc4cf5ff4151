// Every tensor layout llama.cpp's loader accepts for our architectures (docs/engine.md,
// "Tensor layouts") runs to the same logits as the split layout synth writes. Each test
// writes a small model with synth, rewrites its tensors into the variant exactly as
// llama.cpp lays it out (read from its loader and graph code), and compares the logits of
// a prompt and a few teacher-forced steps. Where the variant computes the same products
// (a fused matrix split into row views, one expert product sliced in two) they must be
// bit-identical.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <map>

#include "engine_support.hpp"
#include "gguf_rewrite.hpp"
#include "planner/describe.hpp"
#include "registry/registry.hpp"
#include "support.hpp"
#include "synth/synth.hpp"
#include "writer.hpp"
#include "skip.hpp"

using namespace sy;
namespace fs = std::filesystem;
using test::Tensors;

namespace {

std::vector<std::byte> concat(std::initializer_list<const std::vector<std::byte>*> parts) {
  std::vector<std::byte> out;
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

/// Deterministic F32 values in [-scale, scale).
std::vector<std::byte> f32_values(int64_t n, uint32_t seed, float scale) {
  std::vector<std::byte> out(static_cast<size_t>(n) * 4);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    const float v = (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
    std::memcpy(out.data() + i * 4, &v, 4);
  }
  return out;
}

int64_t layers_of(const Tensors& t) {
  int64_t n = 0;
  while (t.has("blk." + std::to_string(n) + ".attn_norm.weight")) ++n;
  return n;
}

/// llama.cpp's fused attention input: [E, q + k + v], the query rows first, then key, then value.
void fuse_qkv(Tensors& t, bool with_bias) {
  for (int64_t il = 0; il < layers_of(t); ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    if (!t.has(b + "attn_q.weight")) continue;  // a linear-attention layer
    const TensorDesc q = t.desc(b + "attn_q.weight"), k = t.desc(b + "attn_k.weight"), v = t.desc(b + "attn_v.weight");
    REQUIRE(q.type == k.type);
    REQUIRE(q.type == v.type);
    t.add(b + "attn_qkv.weight", q.type, {q.shape[0], q.shape[1] + k.shape[1] + v.shape[1]},
          concat({&t.bytes(q.name), &t.bytes(k.name), &t.bytes(v.name)}));
    if (with_bias) {
      t.add(b + "attn_qkv.bias", StorageType::F32, {q.shape[1] + k.shape[1] + v.shape[1]},
            concat({&t.bytes(b + "attn_q.bias"), &t.bytes(b + "attn_k.bias"), &t.bytes(b + "attn_v.bias")}));
      for (const char* n : {"attn_q.bias", "attn_k.bias", "attn_v.bias"}) t.remove(b + n);
    }
    for (const auto& n : {q.name, k.name, v.name}) t.remove(n);
  }
}

/// llama.cpp's ffn_gate_up_exps: [E, 2 ff, experts], each expert's gate rows then its up rows.
void fuse_gate_up(Tensors& t) {
  for (int64_t il = 0; il < layers_of(t); ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    if (!t.has(b + "ffn_gate_exps.weight")) continue;
    const TensorDesc g = t.desc(b + "ffn_gate_exps.weight"), u = t.desc(b + "ffn_up_exps.weight");
    REQUIRE(g.type == u.type);
    const auto& gb = t.bytes(g.name);
    const auto& ub = t.bytes(u.name);
    const size_t slice = gb.size() / static_cast<size_t>(g.shape[2]);
    std::vector<std::byte> fused;
    for (int64_t e = 0; e < g.shape[2]; ++e) {
      const auto at = static_cast<std::ptrdiff_t>(static_cast<size_t>(e) * slice);
      fused.insert(fused.end(), gb.begin() + at, gb.begin() + at + static_cast<std::ptrdiff_t>(slice));
      fused.insert(fused.end(), ub.begin() + at, ub.begin() + at + static_cast<std::ptrdiff_t>(slice));
    }
    t.add(b + "ffn_gate_up_exps.weight", g.type, {g.shape[0], 2 * g.shape[1], g.shape[2]}, std::move(fused));
    t.remove(g.name);
    t.remove(u.name);
  }
}

/// Random q/k/v biases (what Qwen2 files carry).
void add_qkv_biases(Tensors& t) {
  for (int64_t il = 0; il < layers_of(t); ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    if (!t.has(b + "attn_q.weight")) continue;
    uint32_t seed = static_cast<uint32_t>(il) * 7;
    for (const char* n : {"attn_q", "attn_k", "attn_v"}) {
      const int64_t rows = t.desc(b + n + ".weight").shape[1];
      t.add(b + n + ".bias", StorageType::F32, {rows}, f32_values(rows, ++seed, 0.5f));
    }
  }
}

fs::path synth_model(const test::TempDir& dir, const std::string& name, synth::Topology topo,
                     const std::string& type = "q8_0") {
  const fs::path p = dir / (name + ".gguf");
  synth::SynthOptions o;
  o.type = type;
  o.threads = 2;
  const Status st = synth::write_synth_model(p, topo, o);
  INFO(st.message());
  REQUIRE(st.is_ok());
  return p;
}

synth::Topology builtin(const std::string& name) {
  auto t = synth::builtin_topology(name);
  REQUIRE(t.has_value());
  return *t;
}

/// The small MoE topologies of each MoE architecture, from the built-in demo shapes.
synth::Topology moe_topology(const std::string& arch) {
  if (arch == "qwen35moe") return builtin("demo");
  synth::Topology t = builtin("demo-llama");
  t.arch = arch;
  t.n_ff = 0;
  t.n_expert = 8, t.n_expert_used = 2, t.n_ff_exp = 128;
  if (arch == "qwen3moe") t.qk_norm = true;
  if (arch == "qwen2moe") t.n_ff_shexp = 128;
  return t;
}

/// Logits of a prompt and three teacher-forced steps.
std::vector<std::vector<float>> logits_of(const fs::path& model, const test::EngineOptions& o = {}) {
  auto rt = test::bring_up_model(model, o);
  return test::teacher_forced(*rt->engine, 0, {1, 17, 300, 42, 7}, {99, 5, 250});
}

void require_same_logits(const fs::path& a, const fs::path& b, const test::EngineOptions& o = {}) {
  const auto la = logits_of(a, o), lb = logits_of(b, o);
  REQUIRE(la.size() == lb.size());
  for (size_t s = 0; s < la.size(); ++s) {
    INFO("step " << s);
    REQUIRE(la[s].size() == lb[s].size());
    CHECK(std::memcmp(la[s].data(), lb[s].data(), la[s].size() * sizeof(float)) == 0);
  }
}

fs::path rewritten(const test::TempDir& dir, const fs::path& from, const std::string& name,
                   const std::function<void(Tensors&)>& edit) {
  Tensors t = Tensors::read(from);
  edit(t);
  const fs::path p = dir / (name + ".gguf");
  t.write(p);
  return p;
}

}  // namespace

TEST_CASE("layouts: fused attn_qkv gives the logits of split q/k/v", "[model][layouts]") {
  test::TempDir dir;
  for (const std::string arch : {"llama", "qwen2", "qwen3", "qwen3moe", "qwen35moe"}) {
    DYNAMIC_SECTION(arch) {
      synth::Topology t = arch == "qwen35moe" || arch == "qwen3moe" ? moe_topology(arch) : builtin("demo-llama");
      t.arch = arch;
      if (arch == "qwen3") t.qk_norm = true;
      const fs::path split = synth_model(dir, arch, t);
      require_same_logits(split, rewritten(dir, split, arch + "-qkv", [](Tensors& x) { fuse_qkv(x, false); }));
    }
  }
}

TEST_CASE("layouts: q/k/v biases, split or fused into attn_qkv.bias", "[model][layouts]") {
  test::TempDir dir;
  synth::Topology t = builtin("demo-llama");
  t.arch = "qwen2";
  const fs::path plain = synth_model(dir, "qwen2", t);
  const fs::path split = rewritten(dir, plain, "qwen2-bias", add_qkv_biases);
  // The split biases are used (the qwen2-bias conformance fixture holds them to llama.cpp).
  CHECK(logits_of(plain).back() != logits_of(split).back());
  SECTION("fused weight and fused bias") {
    require_same_logits(split, rewritten(dir, split, "fused", [](Tensors& x) { fuse_qkv(x, true); }));
  }
  SECTION("fused weight beside split biases, as an earlier llama.cpp release read them") {
    require_same_logits(split, rewritten(dir, split, "fused-w", [](Tensors& x) { fuse_qkv(x, false); }));
  }
}

TEST_CASE("layouts: fused ffn_gate_up_exps gives the logits of split gate and up experts", "[model][layouts]") {
  test::TempDir dir;
  for (const std::string arch : {"llama", "qwen2moe", "qwen3moe", "qwen35moe"}) {
    DYNAMIC_SECTION(arch) {
      const fs::path split = synth_model(dir, arch, moe_topology(arch));
      require_same_logits(split, rewritten(dir, split, arch + "-gate-up", fuse_gate_up));
    }
  }
}

TEST_CASE("layouts: tied and separate output give the same logits when they hold the same matrix", "[model][layouts]") {
  test::TempDir dir;
  synth::Topology t = builtin("demo-llama");
  t.tied_embeddings = true;
  const fs::path tied = synth_model(dir, "tied", t);
  // A separate output.weight may be repacked into an interleaved layout, whose kernel sums
  // in another order than the row-major one token_embd keeps: bit equality holds with the
  // file's layout (the interleaved kernels are held to the row-major ones in test_cpu_x16).
  test::EngineOptions o;
  o.backends = "[ { plugin: cpu, threads: 2, repack: false } ]";
  require_same_logits(tied, rewritten(dir, tied, "separate", [](Tensors& x) {
                        const TensorDesc e = x.desc("token_embd.weight");
                        x.add("output.weight", e.type, e.shape, x.bytes(e.name));
                      }), o);
}

TEST_CASE("layouts: zero biases on the output, attention output and FFN leave the logits unchanged",
          "[model][layouts]") {
  // x + 0 is x exactly, so a file carrying all-zero optional biases must match the file
  // without them bit for bit; the output bias test below shows non-zero biases are used.
  test::TempDir dir;
  const fs::path plain = synth_model(dir, "llama", builtin("demo-llama"));
  require_same_logits(plain, rewritten(dir, plain, "zero-bias", [](Tensors& x) {
                        const int64_t E = x.desc("token_embd.weight").shape[0];
                        const int64_t V = x.desc("token_embd.weight").shape[1];
                        x.add("output.bias", StorageType::F32, {V}, std::vector<std::byte>(static_cast<size_t>(V) * 4));
                        for (int64_t il = 0; il < layers_of(x); ++il) {
                          const std::string b = "blk." + std::to_string(il) + ".";
                          const int64_t ff = x.desc(b + "ffn_up.weight").shape[1];
                          auto zeros = [](int64_t n) { return std::vector<std::byte>(static_cast<size_t>(n) * 4); };
                          x.add(b + "attn_output.bias", StorageType::F32, {E}, zeros(E));
                          x.add(b + "ffn_gate.bias", StorageType::F32, {ff}, zeros(ff));
                          x.add(b + "ffn_up.bias", StorageType::F32, {ff}, zeros(ff));
                          x.add(b + "ffn_down.bias", StorageType::F32, {E}, zeros(E));
                        }
                      }));
}

TEST_CASE("layouts: output.bias is added to every logit", "[model][layouts]") {
  test::TempDir dir;
  const fs::path plain = synth_model(dir, "llama", builtin("demo-llama"));
  const int64_t V = 512;
  const auto bias = f32_values(V, 5, 3.0f);
  const fs::path biased = rewritten(dir, plain, "out-bias", [&](Tensors& x) {
    x.add("output.bias", StorageType::F32, {V}, bias);
  });
  const auto a = logits_of(plain), b = logits_of(biased);
  REQUIRE(a.size() == b.size());
  for (size_t s = 0; s < a.size(); ++s)
    for (int64_t i = 0; i < V; ++i) {
      float bi = 0;
      std::memcpy(&bi, bias.data() + i * 4, 4);
      // logits + bias in f32: one rounding of the sum, the only difference.
      CHECK(b[s][static_cast<size_t>(i)] == a[s][static_cast<size_t>(i)] + bi);
    }
}

TEST_CASE("layouts: multi-token-prediction blocks after the stack are skipped", "[model][layouts]") {
  // Qwen3.5/3.6 and GLM files count their prediction block in block_count and name it
  // with nextn_predict_layers; decoding never runs it.
  test::TempDir dir;
  const fs::path plain = synth_model(dir, "qwen35moe", builtin("demo"));
  const fs::path with_mtp = rewritten(dir, plain, "mtp", [](Tensors& x) {
                        const int64_t L = layers_of(x);
                        const std::string last = "blk." + std::to_string(L - 1) + ".", mtp = "blk." + std::to_string(L) + ".";
                        const size_t n = x.descs.size();
                        for (size_t i = 0; i < n; ++i)
                          if (x.descs[i].name.rfind(last, 0) == 0) {
                            TensorDesc d = x.descs[i];
                            d.name = mtp + d.name.substr(last.size());
                            x.add(d.name, d.type, d.shape, x.data[i]);
                          }
                        const int64_t E = x.desc("token_embd.weight").shape[0];
                        x.add(mtp + "nextn.eh_proj.weight", StorageType::F32, {2 * E, E}, f32_values(2 * E * E, 3, 0.1f));
                        x.set("qwen35moe.block_count", uint32_t(L + 1));
                        x.set("qwen35moe.nextn_predict_layers", uint32_t{1});
                      });
  require_same_logits(plain, with_mtp);
  // plan reads the same header: 4 decoded blocks, the prediction block apart.
  static registry::Registry reg(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  auto desc = planner::describe_file(reg, with_mtp, "");
  REQUIRE(desc.has_value());
  CHECK(desc->hp.n_layer == 4);
  CHECK(desc->hp.n_layer_nextn == 1);
}

TEST_CASE("layouts: layouts llama.cpp no longer loads, or we cannot run, are refused naming the tensor",
          "[model][layouts]") {
  test::TempDir dir;
  const fs::path mixtral = synth_model(dir, "mixtral", moe_topology("llama"));
  SECTION("one tensor per expert (pre-2024 Mixtral files)") {
    const fs::path p = rewritten(dir, mixtral, "per-expert", [](Tensors& x) {
      const TensorDesc g = x.desc("blk.0.ffn_gate_exps.weight");
      const size_t slice = x.bytes(g.name).size() / static_cast<size_t>(g.shape[2]);
      std::vector<std::byte> one(x.bytes(g.name).begin(), x.bytes(g.name).begin() + static_cast<std::ptrdiff_t>(slice));
      x.add("blk.0.ffn_gate.0.weight", g.type, {g.shape[0], g.shape[1]}, std::move(one));
      x.remove(g.name);
    });
    CHECK_THROWS_WITH(test::bring_up_model(p), Catch::Contains("blk.0.ffn_gate.0.weight") &&
                                                   Catch::Contains("convert_hf_to_gguf.py"));
  }
  SECTION("experts without a gate") {
    const fs::path p = rewritten(dir, mixtral, "no-gate", [](Tensors& x) { x.remove("blk.1.ffn_gate_exps.weight"); });
    CHECK_THROWS_WITH(test::bring_up_model(p), Catch::Contains("no blk.1.ffn_gate_exps.weight"));
  }
  SECTION("a fused tensor of the wrong size names it and both shapes") {
    const fs::path p = rewritten(dir, mixtral, "bad-fused", [](Tensors& x) {
      fuse_gate_up(x);
      const TensorDesc d = x.desc("blk.2.ffn_gate_up_exps.weight");
      std::vector<std::byte> b(x.bytes(d.name).begin(), x.bytes(d.name).end() - static_cast<std::ptrdiff_t>(x.bytes(d.name).size() / 2));
      x.remove(d.name);
      x.add(d.name, d.type, {d.shape[0], d.shape[1], d.shape[2] / 2}, std::move(b));
    });
    CHECK_THROWS_WITH(test::bring_up_model(p),
                      Catch::Contains("tensor blk.2.ffn_gate_up_exps.weight is [256, 256, 4]") &&
                          Catch::Contains("needs [256, 256, 8]") && Catch::Contains("llama.expert_count = 8"));
  }
}

namespace {

std::vector<std::byte> f32_bytes(const std::vector<float>& v) {
  std::vector<std::byte> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

}  // namespace

TEST_CASE("layouts: rope_freqs.weight divides each RoPE pair's angle, as llama.cpp's freq_factors", "[model][layouts]") {
  // demo-llama: rope.dimension_count 64 (32 factors), rope.freq_base 5e5. f32 weights keep
  // the comparison free of activation quantization.
  test::TempDir dir;
  const synth::Topology topo = builtin("demo-llama");
  REQUIRE(topo.n_rot == 64);
  REQUIRE(topo.rope_base == 5e5);
  const fs::path plain = synth_model(dir, "llama", topo, "f32");
  SECTION("factors of 1 leave the logits bit-identical") {
    require_same_logits(plain, rewritten(dir, plain, "ones", [](Tensors& x) {
                          x.add("rope_freqs.weight", StorageType::F32, {32}, f32_bytes(std::vector<float>(32, 1.0f)));
                        }));
  }
  SECTION("factors (b2/b1)^(2i/n) with base b1 are the plain model with base b2") {
    // b1^(-2i/n) / (b2/b1)^(2i/n) = b2^(-2i/n): the factors stand for a change of base,
    // which the model without factors computes through rope.freq_base alone.
    const double b1 = 5e5, b2 = 1e4;
    std::vector<float> ff(32);
    for (size_t i = 0; i < ff.size(); ++i) ff[i] = static_cast<float>(std::pow(b2 / b1, 2.0 * static_cast<double>(i) / 64.0));
    const fs::path factored = rewritten(dir, plain, "factored", [&](Tensors& x) {
      x.add("rope_freqs.weight", StorageType::F32, {32}, f32_bytes(ff));
    });
    const fs::path rebased = rewritten(dir, plain, "rebased", [&](Tensors& x) {
      x.set("llama.rope.freq_base", static_cast<float>(b2));
    });
    const auto lp = logits_of(plain), lf = logits_of(factored), lr = logits_of(rebased);
    REQUIRE(lf.size() == lr.size());
    double max_diff = 0, max_moved = 0;
    for (size_t s = 0; s < lf.size(); ++s) {
      REQUIRE(lf[s].size() == lr[s].size());
      for (size_t i = 0; i < lf[s].size(); ++i) {
        max_diff = std::max(max_diff, static_cast<double>(std::fabs(lf[s][i] - lr[s][i])));
        max_moved = std::max(max_moved, static_cast<double>(std::fabs(lf[s][i] - lp[s][i])));
      }
    }
    INFO("largest difference to the rebased model " << max_diff << ", to the plain model " << max_moved);
    // The factors are used: the logits move away from the model without them ...
    CHECK(max_moved > 1e-2);
    // ... to those of the rebased model, up to the f32 rounding of the factors (~6e-8
    // relative in each angle) carried through four layers (observed: under 2e-6).
    CHECK(max_diff < 1e-4);
  }
}

TEST_CASE("layouts: rope_freqs.weight with half the layers on a GPU: each layer reads the factors' copy on its device",
          "[model][layouts][vulkan]") {
  test::TempDir dir;
  const fs::path plain = synth_model(dir, "llama", builtin("demo-llama"), "f32");
  // rope_freqs.weight is global (it lives with the output head, in RAM here); every GPU
  // layer gets a copy, so its rotation runs there and moves nothing. The factors equal to
  // a change of base again, so the factored model must move exactly the bytes of the
  // rebased one (which has no factors) and give its logits.
  test::EngineOptions o;
  o.backends = "[ vulkan, { plugin: cpu, threads: 2 } ]";
  o.placement = "{ gpu_layers: 2 }";
  const double b1 = 5e5, b2 = 1e4;
  std::vector<float> ff(32);
  for (size_t i = 0; i < ff.size(); ++i) ff[i] = static_cast<float>(std::pow(b2 / b1, 2.0 * static_cast<double>(i) / 64.0));
  const fs::path factored = rewritten(dir, plain, "factored-gpu", [&](Tensors& x) {
    x.add("rope_freqs.weight", StorageType::F32, {32}, f32_bytes(ff));
  });
  const fs::path rebased = rewritten(dir, plain, "rebased-gpu", [&](Tensors& x) {
    x.set("llama.rope.freq_base", static_cast<float>(b2));
  });
  std::unique_ptr<engine::Runtime> rf;
  try {
    rf = test::bring_up_model(factored, o);
  } catch (const std::exception& e) {
    sy::test::skip_unless_ci(std::string("no Vulkan device here: ") + e.what());
    return;
  }
  auto rr = test::bring_up_model(rebased, o);
  REQUIRE(rf->names.size() == 2);
  REQUIRE(rf->model->weights().placed()[0].weights > 0);  // gpu0 holds layers
  const auto lf = test::teacher_forced(*rf->engine, 0, {1, 17, 300, 42, 7}, {99, 5, 250});
  const auto lr = test::teacher_forced(*rr->engine, 0, {1, 17, 300, 42, 7}, {99, 5, 250});
  double max_diff = 0;
  for (size_t s = 0; s < lf.size(); ++s)
    for (size_t i = 0; i < lf[s].size(); ++i)
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(lf[s][i] - lr[s][i])));
  CHECK(max_diff < 1e-4);
  CHECK(rf->engine->stats().fallback_nodes == 0);
  CHECK(rf->engine->stats().last_step_transfer_bytes == rr->engine->stats().last_step_transfer_bytes);
  CHECK(rf->engine->stats().transfer_bytes == rr->engine->stats().transfer_bytes);
}

TEST_CASE("layouts: rope_freqs.weight of the wrong shape or type, or on an architecture that does not apply it, "
          "is refused naming it", "[model][layouts]") {
  test::TempDir dir;
  const fs::path llama = synth_model(dir, "llama", builtin("demo-llama"));
  SECTION("wrong length") {
    const fs::path p = rewritten(dir, llama, "short", [](Tensors& x) {
      x.add("rope_freqs.weight", StorageType::F32, {16}, f32_values(16, 1, 1.0f));
    });
    CHECK_THROWS_WITH(test::bring_up_model(p), Catch::Contains("tensor rope_freqs.weight is [16]") &&
                                                   Catch::Contains("needs [32]") &&
                                                   Catch::Contains("half of llama.rope.dimension_count = 64"));
  }
  SECTION("not F32") {
    const fs::path p = rewritten(dir, llama, "f16", [](Tensors& x) {
      x.add("rope_freqs.weight", StorageType::F16, {32}, std::vector<std::byte>(64));
    });
    CHECK_THROWS_WITH(test::bring_up_model(p), Catch::Contains("tensor rope_freqs.weight is stored as F16") &&
                                                   Catch::Contains("must be F32"));
  }
  SECTION("an architecture whose llama.cpp graph passes no factors") {
    synth::Topology t = builtin("demo-llama");
    t.arch = "qwen2";
    const fs::path p = rewritten(dir, synth_model(dir, "qwen2", t), "qwen2-freqs", [](Tensors& x) {
      x.add("rope_freqs.weight", StorageType::F32, {32}, f32_values(32, 1, 1.0f));
    });
    CHECK_THROWS_WITH(test::bring_up_model(p), Catch::Contains("rope_freqs.weight") &&
                                                   Catch::Contains("the qwen2 architecture does not apply"));
  }
}
