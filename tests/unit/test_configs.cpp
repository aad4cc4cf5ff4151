// Every pipeline shipped in configs/ validates against the built plugins, and says what
// its comment promises.
#include <catch2/catch.hpp>

#include "pipeline/validate.hpp"
#include "registry/registry.hpp"

using namespace sy::pipeline;
namespace fs = std::filesystem;

namespace {
LoadResult load(const std::string& name) {
  const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
  return load_pipeline(fs::path(SY_SOURCE_DIR) / "configs" / name, {}, &dirs);
}
}  // namespace

TEST_CASE("every shipped config validates", "[configs]") {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SY_SOURCE_DIR) / "configs")) {
    if (e.path().extension() != ".yaml") continue;
    ++n;
    const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
    const auto r = load_pipeline(e.path(), {}, &dirs);
    INFO(e.path().string());
    for (const auto& d : r.diagnostics) INFO(format_diagnostic(d));
    CHECK(r.ok());
  }
  CHECK(n >= 7);
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
}

TEST_CASE("long-context: 32K+ with q8_0 KV and the first layers' experts in RAM", "[configs]") {
  const auto r = load("long-context.yaml");
  REQUIRE(r.ok());
  CHECK(r.pipeline.context.length >= 32768);
  CHECK(r.pipeline.context.kv_type == "q8_0");
  CHECK(r.pipeline.placement.cpu_moe.mode == LayerCount::Mode::count);
  CHECK(r.pipeline.placement.cpu_moe.n > 0);
}

TEST_CASE("small-gpu: every routed expert in RAM", "[configs]") {
  const auto r = load("small-gpu.yaml");
  REQUIRE(r.ok());
  CHECK(r.pipeline.placement.cpu_moe.mode == LayerCount::Mode::all);
  CHECK(r.pipeline.placement.gpu_layers.mode == LayerCount::Mode::all);
}

TEST_CASE("batch-throughput: many parallel sequences", "[configs]") {
  const auto r = load("batch-throughput.yaml");
  REQUIRE(r.ok());
  CHECK(r.pipeline.context.parallel >= 16);
  CHECK(r.pipeline.server.batch_queue);
}

TEST_CASE("cpu-only: no GPU backend", "[configs]") {
  const auto r = load("cpu-only.yaml");
  REQUIRE(r.ok());
  REQUIRE(r.pipeline.backends.size() == 1);
  CHECK(r.pipeline.backends[0].plugin == "cpu");
}

TEST_CASE("validating reads manifests only: no plugin library is loaded", "[configs]") {
  std::vector<Diagnostic> diags;
  const Node root = load_with_extends(fs::path(SY_SOURCE_DIR) / "configs" / "chat-24gb.yaml", diags);
  const sy::registry::Registry reg(std::vector<sy::registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  REQUIRE(reg.plugins().size() >= 2);
  validate(root, reg, diags);
  CHECK_FALSE(has_errors(diags));
  for (size_t i = 0; i < reg.plugins().size(); ++i) {
    INFO(reg.plugins()[i].library.string());
    CHECK_FALSE(reg.is_loaded(i));
  }
}
