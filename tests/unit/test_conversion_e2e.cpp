// The conversion plan end to end: a model whose weights are in types only a test plugin
// knows (tests/plugins/toy_type.cpp: TOY8, Q8_0 stored backwards with a repack into Q8_0,
// and TOY8P, the same without one) runs on the CPU and on Vulkan through the plan, with
// the logits of the same model stored as Q8_0. The core has no code for either type.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "engine_support.hpp"
#include "support.hpp"
#include "synth/synth.hpp"
#include "skip.hpp"

namespace fs = std::filesystem;
using namespace sy;
using convert::Action;

namespace {

struct Fixture {
  test::TempDir dir;
  fs::path model, plugins;
  Fixture() {
    auto t = synth::builtin_topology("demo-llama");
    if (!t) throw std::runtime_error(t.status().message());
    model = dir / "demo-q8_0.gguf";
    synth::SynthOptions o;
    o.type = "q8_0", o.seed = 7;
    if (auto st = synth::write_synth_model(model, *t, o); !st) throw std::runtime_error(st.message());
    plugins = dir / "plugins";
    fs::create_directories(plugins);
    test::copy_plugin(fs::path(SY_TEST_PLUGIN_DIR) / "libsytest-toy_type.so", plugins);
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

// Brings the fixture model up through `format` (gguf: as written, in Q8_0).
Result<std::unique_ptr<engine::Runtime>> up(const std::string& format, const std::string& backends,
                                            const std::string& extra = "") {
  const auto& f = fixture();
  const std::string yaml = "model: { path: " + nlohmann::json(f.model.string()).dump() + ", format: " + format +
                           " }\nplugin_path: [" + nlohmann::json(f.plugins.string()).dump() + "]\nbackends: " + backends +
                           "\n" + extra + "context: { length: 128, kv_type: f32, parallel: 2 }\nsampling: [ greedy ]\n";
  const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
  pipeline::LoadOptions lo;
  lo.fixed_search_dirs = &dirs;
  auto lr = pipeline::load_pipeline_from_text(yaml, "test pipeline", lo);
  if (!lr.ok()) return error::invalid_argument(pipeline::format_diagnostic(lr.diagnostics.front()));
  const std::vector<registry::SearchDir> search{{SY_BUILD_PLUGIN_DIR, "build tree"}, {f.plugins, "test"}};
  return engine::bring_up(lr.pipeline, &search);
}

std::unique_ptr<engine::Runtime> must(Result<std::unique_ptr<engine::Runtime>> r) {
  if (!r) throw std::runtime_error(r.status().message());
  return std::move(*r);
}

const std::vector<int32_t> kPrompt{1, 300, 301, 302};
const std::vector<int32_t> kForced{303, 304, 305};

// The step of the plan for `type` on `device`, or nullptr.
const convert::Step* step(const engine::Runtime& rt, std::string_view type, std::string_view device) {
  for (const auto& s : rt.model->weights().conversions().steps())
    if (storage_type_name(s.from) == type && s.device == device) return &s;
  return nullptr;
}

// The Vulkan device's name, or empty (with a WARN) where there is none.
std::string vulkan_device() {
  registry::Registry reg(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  if (!reg.find(ComponentKind::backend, "vulkan")) {
    sy::test::skip_unless_ci("the Vulkan backend is not built here");
    return {};
  }
  auto be = reg.create_backend("vulkan", {});
  if (!be) {
    sy::test::skip_unless_ci("no Vulkan device: " + be.status().message());
    return {};
  }
  return (*be)->device(0).info().name;
}

// No 16-row interleaving of the Q8_0 reference, so both sides run the same CPU kernel.
const std::string kCpu = "[ { plugin: cpu, threads: 2, repack: false } ]";
const std::string kVulkan = "[ vulkan, { plugin: cpu, threads: 2, repack: false } ]";
const std::string kAllOnGpu = "placement: { gpu_layers: all }\n";

}  // namespace

TEST_CASE("conversion plan: TOY8 runs on the CPU through its repack into Q8_0, as the Q8_0 model", "[convert][engine]") {
  auto ref = must(up("gguf", kCpu));
  auto toy = must(up("test_toy_gguf", kCpu));
  const auto* s = step(*toy, "test-toy.TOY8", "cpu");
  REQUIRE(s);
  CHECK(s->action == Action::repack);
  CHECK(s->to == StorageType::Q8_0);
  CHECK(s->bytes_after == s->bytes_before);
  CHECK(toy->model->weights().converted() == s->tensors);
  // The repack is exact and the kernels are the same: the same logits, bit for bit.
  CHECK(test::teacher_forced(*toy->engine, 0, kPrompt, kForced) == test::teacher_forced(*ref->engine, 0, kPrompt, kForced));
  CHECK(test::greedy(*toy->engine, 1, kPrompt, 6) == test::greedy(*ref->engine, 1, kPrompt, 6));
}

TEST_CASE("conversion plan: TOY8P runs on the CPU through the generic kernel, as its f32 numbers", "[convert][engine]") {
  auto ref = must(up("test_toy_gguf_f32", kCpu));
  auto toy = must(up("test_toy_gguf_plain", kCpu));
  const auto* s = step(*toy, "test-toy.TOY8P", "cpu");
  REQUIRE(s);
  CHECK(s->action == Action::generic);
  CHECK(toy->model->weights().converted() == 0);  // no copy in another type
  // The generic kernel dots the dequantized blocks in f32, as the F32 model's kernel dots
  // the same floats; only the summation order may differ (512-element chunks).
  const auto a = test::teacher_forced(*toy->engine, 0, kPrompt, kForced);
  const auto b = test::teacher_forced(*ref->engine, 0, kPrompt, kForced);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == b[i].size());
    float scale = 0, diff = 0;
    for (size_t j = 0; j < a[i].size(); ++j) {
      scale = std::max(scale, std::fabs(b[i][j]));
      diff = std::max(diff, std::fabs(a[i][j] - b[i][j]));
    }
    CHECK(diff <= 1e-5f * scale);
  }
  CHECK(test::greedy(*toy->engine, 1, kPrompt, 6) == test::greedy(*ref->engine, 1, kPrompt, 6));
  // With format.convert_to the CPU requantizes instead (preferred to the generic kernel).
  auto rq = must(up("test_toy_gguf_plain", kCpu, "format: { convert_to: q8_0 }\n"));
  const auto* r = step(*rq, "test-toy.TOY8P", "cpu");
  REQUIRE(r);
  CHECK(r->action == Action::requantize);
  CHECK(r->to == StorageType::Q8_0);
}

TEST_CASE("conversion plan: TOY8 runs on Vulkan through its repack into Q8_0, as the Q8_0 model", "[convert][engine][vulkan]") {
  const std::string gpu = vulkan_device();
  if (gpu.empty()) return;
  // strict: nothing may fall back to RAM.
  auto ref = must(up("gguf", kVulkan, kAllOnGpu + "strict: true\n"));
  auto toy = must(up("test_toy_gguf", kVulkan, kAllOnGpu + "strict: true\n"));
  const auto* s = step(*toy, "test-toy.TOY8", gpu);
  REQUIRE(s);
  CHECK(s->action == Action::repack);
  CHECK(s->to == StorageType::Q8_0);
  CHECK(toy->model->weights().kept_on_host() == 0);
  CHECK(test::teacher_forced(*toy->engine, 0, kPrompt, kForced) == test::teacher_forced(*ref->engine, 0, kPrompt, kForced));
  CHECK(test::greedy(*toy->engine, 1, kPrompt, 6) == test::greedy(*ref->engine, 1, kPrompt, 6));
}

TEST_CASE("conversion plan: TOY8P on Vulkan needs format.convert_to, or stays in RAM", "[convert][engine][vulkan]") {
  const std::string gpu = vulkan_device();
  if (gpu.empty()) return;
  auto refused = up("test_toy_gguf_plain", kVulkan, kAllOnGpu + "strict: true\n");
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(),
             Catch::Contains(gpu + " has no matmul kernel for test-toy.TOY8P weights (") &&
                 Catch::Contains("set format.convert_to (q8_0, q4_k or f16)"));
  // Without strict the CPU runs those weights from RAM (its generic kernel).
  auto kept = must(up("test_toy_gguf_plain", kVulkan, kAllOnGpu));
  CHECK(kept->model->weights().kept_on_host() > 0);
  const auto* g = step(*kept, "test-toy.TOY8P", "cpu");
  REQUIRE(g);
  CHECK(g->action == Action::generic);
  // With convert_to, requantized into Q8_0 on the GPU; the model's weights were Q8_0 to
  // begin with, so the greedy continuation is the Q8_0 model's.
  auto ref = must(up("gguf", kVulkan, kAllOnGpu + "strict: true\n"));
  auto rq = must(up("test_toy_gguf_plain", kVulkan, kAllOnGpu + "strict: true\nformat: { convert_to: q8_0 }\n"));
  const auto* r = step(*rq, "test-toy.TOY8P", gpu);
  REQUIRE(r);
  CHECK(r->action == Action::requantize);
  CHECK(rq->model->weights().kept_on_host() == 0);
  CHECK(test::greedy(*rq->engine, 1, kPrompt, 6) == test::greedy(*ref->engine, 1, kPrompt, 6));
}
