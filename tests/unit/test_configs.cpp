// Every pipeline shipped in configs/ validates against the built plugins, and says what
// its comment promises.
#include <catch2/catch.hpp>

#include "eval/prompts.hpp"
#include "eval/spec.hpp"

#include "engine/runtime_setup.hpp"
#include "pipeline/validate.hpp"
#include "placement/placement.hpp"
#include "registry/registry.hpp"
#include "synth/synth.hpp"
#include "support.hpp"

using namespace sy::pipeline;
namespace fs = std::filesystem;

namespace {
// The configs name a model that is not in the repository and validation checks that the
// file exists, so an empty file stands in for it.
std::string stand_in_model() {
  static const sy::test::TempDir dir;
  sy::test::write_file(dir / "model.gguf", "");
  return "model.path=" + (dir / "model.gguf").string();
}

LoadResult load(const std::string& name) {
  const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
  return load_pipeline(fs::path(SY_SOURCE_DIR) / "configs" / name, {stand_in_model()}, &dirs);
}

// Plans the config for Qwen3.6-35B-A3B Q4_K_M (the model the configs are written for) on
// `vram` GiB of GPU (0: none) and `ram` GiB of RAM, as `switchyard plan -P` does.
sy::Result<sy::placement::Fit> plan(const Pipeline& p, uint64_t vram, uint64_t ram) {
  auto t = sy::synth::builtin_topology("qwen3.6-35b-a3b");
  REQUIRE(t);
  auto m = sy::synth::describe(*t, "q4_k_m");
  REQUIRE(m);
  std::vector<sy::planner::DeviceSpec> devs;
  if (vram) devs.push_back({"gpu0", true, vram << 30, 900e9, "given"});
  devs.push_back({"cpu", false, ram << 30, 60e9, "given"});
  sy::planner::Request r;
  r.ctx = p.context.length, r.parallel = p.context.parallel, r.ubatch = p.context.ubatch;
  auto kv = sy::engine::kv_storage_type(p.context.kv_type);
  REQUIRE(kv);
  r.kv_type = *kv;
  return sy::placement::fit(*m, devs, p.placement, p.placement.gpu_layers.mode == LayerCount::Mode::automatic, r);
}
}  // namespace

TEST_CASE("every shipped config validates", "[configs]") {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SY_SOURCE_DIR) / "configs")) {
    if (e.path().extension() != ".yaml") continue;
    if (e.path().parent_path().filename() == "eval") continue;  // eval files, checked below
    ++n;
    const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
    const auto r = load_pipeline(e.path(), {stand_in_model()}, &dirs);
    INFO(e.path().string());
    for (const auto& d : r.diagnostics) INFO(format_diagnostic(d));
    CHECK(r.ok());
  }
  CHECK(n >= 7);
}

TEST_CASE("every shipped eval file reads, and its prompt set and pipeline files load", "[configs]") {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(SY_SOURCE_DIR) / "configs" / "eval")) {
    if (e.path().extension() != ".yaml") continue;
    ++n;
    INFO(e.path().string());
    auto spec = sy::eval::load_spec(e.path());
    INFO(spec.status().message());
    REQUIRE(spec);
    auto prompts = sy::eval::load_prompts(spec->prompts);
    INFO(prompts.status().message());
    CHECK(prompts);
    for (const auto& p : spec->pipelines) {
      const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
      // The sets are applied as the runner applies them; the model is a stand-in.
      std::vector<std::string> sets = p.sets;
      sets.push_back(stand_in_model());
      const auto r = load_pipeline(p.file, sets, &dirs);
      INFO(p.name);
      for (const auto& d : r.diagnostics) INFO(format_diagnostic(d));
      CHECK(r.ok());
    }
  }
  CHECK(n >= 2);
}

TEST_CASE("chat-24gb: the whole model on one GPU, 8K, q8_0 KV, at most two sequences", "[configs]") {
  const auto r = load("chat-24gb.yaml");
  REQUIRE(r.ok());
  const auto& p = r.pipeline;
  CHECK(p.backends.at(0).plugin == "cuda");
  CHECK(p.placement.gpu_layers.mode == LayerCount::Mode::all);
  CHECK(p.placement.cpu_moe.n == 0);
  CHECK(p.context.length == 8192);
  CHECK(p.context.kv_type == "q8_0");
  CHECK(p.context.parallel <= 2);
  auto f = plan(p, 24, 64);
  REQUIRE(f);
  CHECK(f->fits);
}

TEST_CASE("long-context: 128K with q8_0 KV, automatic placement that fits 24 GB", "[configs]") {
  const auto r = load("long-context.yaml");
  REQUIRE(r.ok());
  CHECK(r.pipeline.context.length >= 131072);
  CHECK(r.pipeline.context.kv_type == "q8_0");
  CHECK(r.pipeline.placement.gpu_layers.mode == LayerCount::Mode::automatic);
  auto f = plan(r.pipeline, 24, 64);
  REQUIRE(f);
  CHECK(f->fits);
  CHECK(f->placed.choice.cpu_moe == 0);  // as its comment says: every expert stays on the GPU
  auto small = plan(r.pipeline, 16, 64);  // a smaller GPU: routed experts move to RAM first
  REQUIRE(small);
  CHECK(small->fits);
  CHECK(small->placed.choice.cpu_moe > 0);
  CHECK(small->placed.choice.gpu_layers == 41);
}

TEST_CASE("small-gpu: every routed expert in RAM", "[configs]") {
  const auto r = load("small-gpu.yaml");
  REQUIRE(r.ok());
  CHECK(r.pipeline.placement.cpu_moe.mode == LayerCount::Mode::all);
  CHECK(r.pipeline.placement.gpu_layers.mode == LayerCount::Mode::all);
  auto f = plan(r.pipeline, 8, 32);  // an 8 GB GPU and 32 GB of RAM
  REQUIRE(f);
  CHECK(f->fits);
}

TEST_CASE("batch-throughput: many parallel sequences", "[configs]") {
  const auto r = load("batch-throughput.yaml");
  REQUIRE(r.ok());
  CHECK(r.pipeline.context.parallel >= 16);
  CHECK(r.pipeline.server.batch_queue);
  auto f = plan(r.pipeline, 24, 64);
  REQUIRE(f);
  CHECK(f->fits);
}

TEST_CASE("cpu-only: no GPU backend", "[configs]") {
  const auto r = load("cpu-only.yaml");
  REQUIRE(r.ok());
  REQUIRE(r.pipeline.backends.size() == 1);
  CHECK(r.pipeline.backends[0].plugin == "cpu");
  auto f = plan(r.pipeline, 0, 32);  // the 35B model in 32 GB of RAM
  REQUIRE(f);
  CHECK(f->fits);
}

TEST_CASE("validating reads manifests only: no plugin library is loaded", "[configs]") {
  std::vector<Diagnostic> diags;
  Node root = load_with_extends(fs::path(SY_SOURCE_DIR) / "configs" / "chat-24gb.yaml", diags);
  apply_set(root, stand_in_model(), diags);
  const sy::registry::Registry reg(std::vector<sy::registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  REQUIRE(reg.plugins().size() >= 2);
  validate(root, reg, diags);
  CHECK_FALSE(has_errors(diags));
  for (size_t i = 0; i < reg.plugins().size(); ++i) {
    INFO(reg.plugins()[i].library.string());
    CHECK_FALSE(reg.is_loaded(i));
  }
}

TEST_CASE("vulkan-24gb: the chat setup through Vulkan, fitting 24 GB", "[configs]") {
  const auto r = load("vulkan-24gb.yaml");
  REQUIRE(r.ok());
  CHECK(r.pipeline.backends.at(0).plugin == "vulkan");
  auto f = plan(r.pipeline, 24, 64);
  REQUIRE(f);
  CHECK(f->fits);
}
