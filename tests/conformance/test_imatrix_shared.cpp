// `switchyard imatrix`'s collection through the engine (Engine::observe_linears and
// quantize/imatrix) on shared models, against sums computed here from the file itself:
//  - stories260K: the input of layer 0's q, k and v projections is the token's embedding
//    RMS-normalised and scaled by attn_norm (llama's definition), so its per-column sums of
//    squares follow from token_embd and attn_norm alone;
//  - the hybrid MoE fixture: every token reaches expert_used_count experts of each stack,
//    so each stack's counts add up to tokens x k;
//  - stories260K on story.txt in chunks of 128: llama.cpp's llama-imatrix file for the same
//    run (tests/data/quality), every entry's counts equal and sums within 1e-3.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

#include "engine_support.hpp"
#include "model.hpp"
#include "quality/perplexity.hpp"
#include "quantize/imatrix.hpp"

namespace imatrix_shared_test {

namespace fs = std::filesystem;

std::vector<float> f32_tensor(const sy::gguf::Model& m, const std::string& name) {
  const auto ts = m.tensors();
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i].name == name) {
      REQUIRE(ts[i].type == sy::StorageType::F32);
      auto v = m.view(i);
      REQUIRE(v);
      std::vector<float> out(v->size() / 4);
      std::memcpy(out.data(), v->data(), v->size());
      return out;
    }
  FAIL("no tensor " << name);
  return {};
}

sy::quant_tool::Imatrix collect(const fs::path& model, const std::vector<int32_t>& ids) {
  auto rt = sy::test::bring_up_model(model);
  auto& e = *rt->engine;
  sy::quant_tool::ImatrixCollector c;
  e.observe_linears([&c](const sy::engine::LinearInput& in) { return c.add(in); });
  REQUIRE(e.kv().add(0).is_ok());
  std::vector<sy::engine::BatchToken> batch;
  for (int32_t t : ids) batch.push_back({0, t, false});
  batch.back().logits = true;  // one output row: every token must still reach the last layer
  std::vector<float> logits;
  REQUIRE(e.decode(batch, logits).is_ok());
  return c.result();
}

}  // namespace imatrix_shared_test

using namespace imatrix_shared_test;

TEST_CASE("imatrix: layer 0's attention input, from the embeddings and attn_norm", "[imatrix]") {
  const fs::path path = fs::path(SY_SHARED_DIR) / "models" / "stories260K.gguf";
  auto m = sy::gguf::Model::open(path);
  REQUIRE(m);
  const auto embd = f32_tensor(**m, "token_embd.weight");
  const auto norm = f32_tensor(**m, "blk.0.attn_norm.weight");
  const int64_t d = static_cast<int64_t>(norm.size());
  const double eps = (*m)->metadata().get_float("llama.attention.layer_norm_rms_epsilon").value();
  std::vector<int32_t> ids;
  for (int i = 0; i < 40; ++i) ids.push_back((i * 37 + 5) % 512);
  const auto im = collect(path, ids);

  std::vector<double> want(static_cast<size_t>(d), 0.0);
  for (int32_t t : ids) {
    const float* x = embd.data() + t * d;
    double ss = 0;
    for (int64_t j = 0; j < d; ++j) ss += static_cast<double>(x[j]) * x[j];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(d) + eps);
    for (int64_t j = 0; j < d; ++j) {
      const double y = x[j] * inv * norm[static_cast<size_t>(j)];
      want[static_cast<size_t>(j)] += y * y;
    }
  }
  for (const char* w : {"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"}) {
    INFO(w);
    REQUIRE(im.entries.count(w) == 1);
    const auto& e = im.entries.at(w);
    REQUIRE(e.cols == d);
    CHECK(e.counts == std::vector<double>{40});
    for (int64_t j = 0; j < d; ++j) CHECK(e.sum2[static_cast<size_t>(j)] == Approx(want[static_cast<size_t>(j)]).epsilon(1e-5));
  }
  // Every linear of every layer is there (output.weight is left out, as llama-imatrix does).
  CHECK(im.entries.size() == 7 * 5);
  CHECK(im.entries.count("output.weight") == 0);
}

TEST_CASE("imatrix: each expert stack counts tokens x experts used", "[imatrix]") {
  const fs::path path = fs::path(SY_SHARED_DIR) / "fixtures" / "qwen35moe-e256-q8_0.gguf";
  auto m = sy::gguf::Model::open(path);
  REQUIRE(m);
  const auto k = (*m)->metadata().get_int("qwen35moe.expert_used_count").value();
  const auto n_exp = (*m)->metadata().get_int("qwen35moe.expert_count").value();
  std::vector<int32_t> ids;
  for (int i = 0; i < 24; ++i) ids.push_back((i * 53 + 11) % 512);
  const auto im = collect(path, ids);
  int64_t stacks = 0;
  for (const auto& [name, e] : im.entries) {
    if (name.find("_exps.") == std::string::npos) continue;
    INFO(name);
    ++stacks;
    CHECK(e.n_mat() == n_exp);
    double total = 0;
    for (double c : e.counts) total += c;
    CHECK(total == static_cast<double>(24 * k));
  }
  CHECK(stacks > 0);
}

TEST_CASE("imatrix: stories260K on story.txt gives llama-imatrix's matrix", "[imatrix]") {
  // tests/data/quality/README.md says how llama.cpp made the reference file.
  const fs::path model = fs::path(SY_SHARED_DIR) / "models" / "stories260K.gguf";
  const fs::path data = fs::path(SY_SOURCE_DIR) / "tests" / "data" / "quality";
  auto ref = sy::quant_tool::read_imatrix(data / "stories260K-story-c128.llama-imatrix.gguf");
  INFO(ref.status().message());
  REQUIRE(ref);
  sy::test::EngineOptions o;
  o.ctx = 128;
  o.ubatch = 128;
  o.kv_type = "f16";  // llama-imatrix's default cache, as the reference was made
  auto rt = sy::test::bring_up_model(model, o);
  REQUIRE(rt->tokenizer);
  std::ifstream in(data / "story.txt", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto tokens = rt->tokenizer->encode(text, true, false);
  auto plan = sy::quality::plan_chunks(static_cast<int64_t>(tokens.size()), 128, -1, 128);
  REQUIRE(plan);
  sy::quant_tool::ImatrixCollector c;
  rt->engine->observe_linears([&c](const sy::engine::LinearInput& li) { return c.add(li); });
  REQUIRE(sy::quality::evaluate_chunks(*rt->engine, tokens, *plan, rt->tokenizer->bos(),
                                       [](int64_t, std::span<const int32_t>, std::span<const float>) { return sy::Status(); })
              .is_ok());
  const auto& ours = c.result().entries;
  REQUIRE(ours.size() == ref->entries.size());
  double worst = 0;
  for (const auto& [name, want] : ref->entries) {
    INFO(name);
    REQUIRE(ours.count(name) == 1);
    const auto& got = ours.at(name);
    CHECK(got.counts == want.counts);
    REQUIRE(got.sum2.size() == want.sum2.size());
    for (size_t j = 0; j < want.sum2.size(); ++j) {
      // llama.cpp sums in float32 and its kernels round differently from ours; 1e-3
      // relative holds that.
      const double rel = std::abs(got.sum2[j] - want.sum2[j]) / std::max(std::abs(want.sum2[j]), 1e-30);
      worst = std::max(worst, rel);
      CHECK(rel <= 1e-3);
    }
  }
  std::cout << "imatrix against llama-imatrix: worst relative difference " << worst << "\n";
}
