// The conversion plan's decisions (convert/plan.hpp), from backends' declared types and
// from started devices, and what the backends' manifests declare.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "convert/native.hpp"
#include "convert/plan.hpp"
#include "dot.hpp"
#include "pipeline/load.hpp"
#include "registry/registry.hpp"
#include "switchyard/quant.hpp"
#include "types/type_registry.hpp"
#include "skip.hpp"

using namespace sy;
using convert::Action;

namespace {

constexpr int kBlock = 32, kBytes = 34;

// Q8_0 stored backwards (as the toy plugin's TOY8): codes reversed, then the f16 scale.
void rev_dequantize(const void* src, float* dst, int64_t n) noexcept {
  const auto* b = static_cast<const uint8_t*>(src);
  for (int64_t blk = 0; blk < n / kBlock; ++blk, b += kBytes) {
    uint16_t h;
    std::memcpy(&h, b + kBlock, 2);
    for (int j = 0; j < kBlock; ++j)
      dst[blk * kBlock + j] = static_cast<float>(static_cast<int8_t>(b[kBlock - 1 - j])) * fp16_to_fp32(h);
  }
}
void rev_repack(const void* src, void* dst, int64_t n, int64_t rows) noexcept {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  for (int64_t blk = 0; blk < rows * (n / kBlock); ++blk, s += kBytes, d += kBytes) {
    std::memcpy(d, s + kBlock, 2);
    for (int j = 0; j < kBlock; ++j) d[2 + j] = s[kBlock - 1 - j];
  }
}

// Three types in this process's registry: UP_REV8 repacks into Q8_0, UP_PLAIN8 has no
// repack, UP_K8 declares a repack into Q4_K (256-element blocks), which rows of 64 cannot hold.
struct Types {
  StorageType rev, plain, k8;
};
const Types& plan_types() {
  static const Types t = [] {
    static std::array<StorageTypeDesc, 3> d{};
    for (auto& x : d) {
      x.block_size = kBlock, x.block_bytes = kBytes, x.flags = kStorageQuantized, x.dequantize_row = rev_dequantize;
    }
    d[0].name = "UP_REV8", d[0].repack_to = "Q8_0", d[0].repack = rev_repack;
    d[1].name = "UP_PLAIN8";
    d[2].name = "UP_K8", d[2].repack_to = "Q4_K", d[2].repack = rev_repack;  // never called: refused first
    static const StorageTypeTable table{sizeof(StorageTypeTable), 3, d.data()};
    auto st = types::TypeRegistry::process().add("unit-plan", table, nullptr);
    if (!st) FAIL(st.message());
    auto id = [](const char* n) { return *storage_type_from_name(std::string("unit-plan.") + n); };
    return Types{id("UP_REV8"), id("UP_PLAIN8"), id("UP_K8")};
  }();
  return t;
}

TensorDesc matrix(StorageType type, int64_t n, int64_t rows, std::string name = "blk.0.ffn_up.weight") {
  TensorDesc d;
  d.name = std::move(name);
  d.type = type;
  d.shape = {n, rows};
  d.bytes = *storage_row_bytes(type, static_cast<uint64_t>(n)) * static_cast<uint64_t>(rows);
  return d;
}

convert::DeviceTypes gpu(std::vector<StorageType> native) {
  return {"gpu0", true, std::move(native), false, nullptr};
}
convert::DeviceTypes host_cpu() {
  return {"cpu", true, {StorageType::F32, StorageType::F16, StorageType::Q8_0, StorageType::Q4_K}, true, nullptr};
}

}  // namespace

TEST_CASE("plan: a native type stays as it is", "[convert]") {
  const auto d = convert::decide(matrix(StorageType::Q8_0, 64, 4), gpu({StorageType::Q8_0}), std::nullopt);
  CHECK(d.action == Action::native);
  CHECK(d.to == StorageType::Q8_0);
  CHECK(d.bytes_after == d.bytes_before);
  CHECK(convert::decide(matrix(StorageType::Q8_0, 64, 4), host_cpu(), std::nullopt).action == Action::native);
}

TEST_CASE("plan: the type's repack into a native type comes before requantization and the generic kernel",
          "[convert]") {
  const auto& t = plan_types();
  for (const auto& dev : {gpu({StorageType::Q8_0}), host_cpu()}) {
    INFO(dev.name);
    const auto d = convert::decide(matrix(t.rev, 64, 4), dev, StorageType::F16);
    CHECK(d.action == Action::repack);
    CHECK(d.to == StorageType::Q8_0);
    CHECK(d.bytes_after == 4 * 2 * 34);
  }
  // A repack target the device does not compute is no use.
  CHECK(convert::decide(matrix(t.rev, 64, 4), gpu({StorageType::F16}), std::nullopt).action == Action::impossible);
}

TEST_CASE("plan: a repack whose blocks do not tile the row is not taken", "[convert]") {
  const auto& t = plan_types();
  const auto dev = gpu({StorageType::Q4_K, StorageType::Q8_0});
  CHECK(convert::decide(matrix(t.k8, 256, 2), dev, std::nullopt).action == Action::repack);
  const auto d = convert::decide(matrix(t.k8, 64, 2), dev, std::nullopt);  // 64 is not a multiple of 256
  CHECK(d.action == Action::impossible);
  const auto q = convert::decide(matrix(t.k8, 64, 2), dev, StorageType::Q8_0);
  CHECK(q.action == Action::requantize);
  CHECK(q.to == StorageType::Q8_0);
}

TEST_CASE("plan: requantization into format.convert_to only where the device computes that type", "[convert]") {
  const auto& t = plan_types();
  const auto dev = gpu({StorageType::Q8_0, StorageType::Q4_K});
  const auto q8 = convert::decide(matrix(t.plain, 256, 3), dev, StorageType::Q8_0);
  CHECK(q8.action == Action::requantize);
  CHECK(q8.bytes_before == 3 * 8 * 34);
  CHECK(q8.bytes_after == 3 * 8 * 34);
  const auto qk = convert::decide(matrix(t.plain, 256, 3), dev, StorageType::Q4_K);
  CHECK(qk.action == Action::requantize);
  CHECK(qk.bytes_after == 3 * 144);  // one 256-element Q4_K block per row
  const auto f16 = convert::decide(matrix(t.plain, 256, 3), dev, StorageType::F16);
  CHECK(f16.action == Action::impossible);
  CHECK_THAT(f16.fix, Catch::Contains("format.convert_to names F16, which gpu0 does not compute either"));
  // Q4_K's 256-element blocks cannot hold rows of 64.
  const auto short_rows = convert::decide(matrix(t.plain, 64, 3), dev, StorageType::Q4_K);
  CHECK(short_rows.action == Action::impossible);
  CHECK_THAT(short_rows.fix, Catch::Contains("cannot hold these rows of 64"));
}

TEST_CASE("plan: on the CPU every registered type runs through the generic kernel", "[convert]") {
  const auto& t = plan_types();
  const auto d = convert::decide(matrix(t.plain, 64, 4), host_cpu(), std::nullopt);
  CHECK(d.action == Action::generic);
  CHECK(d.bytes_after == d.bytes_before);
  // A pipeline's convert_to comes first where the CPU computes that type.
  CHECK(convert::decide(matrix(t.plain, 64, 4), host_cpu(), StorageType::Q8_0).action == Action::requantize);
}

TEST_CASE("plan: impossible says which tensor, type and device, and the fix", "[convert]") {
  const auto& t = plan_types();
  const auto d = convert::decide(matrix(t.plain, 64, 4, "blk.3.attn_q.weight"), gpu({StorageType::Q8_0}), std::nullopt);
  REQUIRE(d.action == Action::impossible);
  CHECK(d.problem("gpu0", "blk.3.attn_q.weight") ==
        "gpu0 has no matmul kernel for unit-plan.UP_PLAIN8 weights (blk.3.attn_q.weight)");
  CHECK_THAT(d.fix, Catch::Contains("set format.convert_to (q8_0, q4_k or f16)") &&
                        Catch::Contains("placement.overrides"));
  // A vector cannot be requantized: the CPU is the fix.
  TensorDesc v;
  v.name = "blk.0.attn_norm.weight", v.type = t.plain, v.shape = {64}, v.bytes = 2 * kBytes;
  const auto vd = convert::decide(v, gpu({StorageType::Q8_0}), StorageType::Q8_0);
  CHECK(vd.action == Action::impossible);
  CHECK(vd.fix == "place such tensors on the CPU (placement.overrides)");
}

TEST_CASE("plan: conversions produce the numbers of the source", "[convert]") {
  const auto& t = plan_types();
  // Two rows of 64: codes j - 16 (reversed) and scales 0.5 * (b + 1).
  std::vector<std::byte> src(4 * kBytes);
  for (int b = 0; b < 4; ++b) {
    auto* blk = reinterpret_cast<uint8_t*>(src.data()) + b * kBytes;
    for (int j = 0; j < kBlock; ++j) blk[kBlock - 1 - j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
    const uint16_t h = fp32_to_fp16(0.5f * static_cast<float>(b + 1));
    std::memcpy(blk + kBlock, &h, 2);
  }
  std::vector<float> want(128), got(128);
  REQUIRE(dequantize_row(t.rev, src.data(), want.data(), 128));
  CHECK(want[0] == -8.0f);  // (0 - 16) * 0.5, from the layout above

  const auto rp = convert::decide(matrix(t.rev, 64, 2), gpu({StorageType::Q8_0}), std::nullopt);
  std::vector<std::byte> out(rp.bytes_after);
  REQUIRE(convert::convert_rows(rp, src, 64, 2, out));
  REQUIRE(dequantize_row(StorageType::Q8_0, out.data(), got.data(), 128));
  CHECK(got == want);  // a repack is exact

  const auto rq = convert::decide(matrix(t.plain, 64, 2), gpu({StorageType::Q8_0}), StorageType::Q8_0);
  REQUIRE(rq.action == Action::requantize);
  out.assign(rq.bytes_after, std::byte{0});
  REQUIRE(convert::convert_rows(rq, src, 64, 2, out));
  REQUIRE(dequantize_row(StorageType::Q8_0, out.data(), got.data(), 128));
  // Q8_0's bound: each block's values within half a step, the step being its largest
  // magnitude over 127 (plus the f16 rounding of that step, 2^-11 of it, times 127).
  for (int b = 0; b < 4; ++b) {
    float amax = 0;
    for (int j = 0; j < kBlock; ++j) amax = std::max(amax, std::fabs(want[b * kBlock + j]));
    const float step = amax / 127.0f;
    for (int j = 0; j < kBlock; ++j)
      CHECK(std::fabs(got[b * kBlock + j] - want[b * kBlock + j]) <= step * (0.5f + 127.0f / 2048.0f));
  }
  CHECK_FALSE(convert::convert_rows(rq, src, 64, 3, out));  // more rows than the buffers hold
}

TEST_CASE("plan: steps gather tensors per device and type, with their bytes", "[convert]") {
  const auto& t = plan_types();
  convert::Plan p;
  const auto dev = gpu({StorageType::Q8_0});
  for (const char* name : {"a.weight", "b.weight"}) {
    const auto d = matrix(t.rev, 64, 4, name);
    p.add("gpu0", d, convert::decide(d, dev, std::nullopt));
  }
  const auto q = matrix(StorageType::Q8_0, 64, 4, "c.weight");
  p.add("gpu0", q, convert::decide(q, dev, std::nullopt));
  REQUIRE(p.steps().size() == 2);
  CHECK(p.converted_tensors() == 2);
  const auto& s = p.steps()[0];
  CHECK(s.tensors == 2);
  CHECK(s.bytes_before == 2 * 4 * 2 * 34);
  CHECK(s.first == "a.weight");
  CHECK(convert::describe(s) ==
        "unit-plan.UP_REV8 on gpu0: repacked into Q8_0 at load (the type's own repack, from unit-plan), 2 tensors, "
        "544 B -> 544 B");
  const auto j = convert::plan_json(p);
  CHECK(j[0]["action"] == "repack");
  CHECK(j[0]["to"] == "Q8_0");
  CHECK(j[1]["action"] == "native");
  CHECK(j[1]["bytes_after"] == 272);
}

TEST_CASE("plan: format.convert_to names three types", "[convert]") {
  CHECK(convert::convert_to_type("q8_0") == StorageType::Q8_0);
  CHECK(convert::convert_to_type("q4_k") == StorageType::Q4_K);
  CHECK(convert::convert_to_type("f16") == StorageType::F16);
  CHECK_FALSE(convert::convert_to_type("q4_0"));
  CHECK_FALSE(convert::convert_to_type("Q8_0"));  // spelled as the pipeline spells it
}

namespace {
registry::Registry& build_plugins() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}
}  // namespace

TEST_CASE("plan: the CPU's manifest lists exactly the types with kernels of their own", "[convert][cpu]") {
  const auto* rec = build_plugins().find(ComponentKind::backend, "cpu");
  REQUIRE(rec);
  const auto dt = convert::declared_types(build_plugins().manifest(*rec), "cpu", nullptr);
  CHECK(dt.declared);
  CHECK(dt.generic);
  for (const auto* info : storage_types()) {
    if (!info->in_gguf || interleave_rows(info->type) != 1) continue;
    const auto k = cpu::dot_kernel_scalar(info->type);
    const bool own = k.usable() && !k.generic;
    const bool listed = std::find(dt.native.begin(), dt.native.end(), info->type) != dt.native.end();
    INFO(info->name);
    CHECK(own == listed);
  }
}

TEST_CASE("plan: a started CPU confirms by its capability query", "[convert][cpu]") {
  const auto& t = plan_types();
  auto be = build_plugins().create_backend("cpu", {});
  REQUIRE(be);
  Device& dev = (*be)->device(0);
  const auto dt = convert::declared_types(build_plugins().manifest(*build_plugins().find(ComponentKind::backend, "cpu")),
                                          "cpu", &dev);
  CHECK(convert::decide(matrix(StorageType::Q4_K, 256, 16), dt, std::nullopt).action == Action::native);
  CHECK(convert::decide(matrix(t.rev, 64, 4), dt, std::nullopt).action == Action::repack);
  CHECK(convert::decide(matrix(t.plain, 64, 4), dt, std::nullopt).action == Action::generic);
}

TEST_CASE("plan: every type Vulkan's manifest lists, a Vulkan device multiplies", "[convert][vulkan]") {
  const auto* rec = build_plugins().find(ComponentKind::backend, "vulkan");
  if (!rec) {
    sy::test::skip_unless_ci("the Vulkan backend is not built here");
    return;
  }
  auto be = build_plugins().create_backend("vulkan", {});
  if (!be) {
    sy::test::skip_unless_ci("no Vulkan device: " + be.status().message());
    return;
  }
  const auto manifest_only = convert::declared_types(build_plugins().manifest(*rec), "vulkan", nullptr);
  CHECK(manifest_only.declared);
  CHECK_FALSE(manifest_only.generic);
  CHECK(manifest_only.native.size() >= 23);  // the GGUF types, the grouped integers and FP8 blocks
  const auto dt = convert::declared_types(build_plugins().manifest(*rec), "vulkan0", &(*be)->device(0));
  for (StorageType type : dt.native) {
    INFO(storage_type_name(type));
    CHECK(convert::decide(matrix(type, 256, 4), dt, std::nullopt).action == Action::native);
  }
  CHECK(convert::decide(matrix(plan_types().rev, 256, 4), dt, std::nullopt).action == Action::repack);
  CHECK(convert::decide(matrix(plan_types().plain, 256, 4), dt, std::nullopt).action == Action::impossible);
  // An act-order input order is no weight type of the manifest: the started device's
  // gather_cols takes it; from the manifest alone it stays with the CPU, naming the op.
  TensorDesc order;
  order.name = "blk.0.ffn_down.input_order";
  order.type = StorageType::I32;
  order.shape = {256};
  order.bytes = 1024;
  CHECK(convert::decide(order, dt, std::nullopt).action == Action::native);
  const auto offline = convert::decide(order, manifest_only, std::nullopt);
  CHECK(offline.action == Action::impossible);
  CHECK(offline.op == "gather_cols");
}

TEST_CASE("pipeline: format.convert_to takes q8_0, q4_k or f16, and nothing else", "[convert][pipeline]") {
  const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  pipeline::LoadOptions lo;
  lo.fixed_search_dirs = &dirs;
  lo.validate.model_file = false;
  auto load = [&](const std::string& format) {
    return pipeline::load_pipeline_from_text("model: m.gguf\nformat: " + format + "\nsampling: [ greedy ]\n", "p.yaml", lo);
  };
  for (const std::string v : {"q8_0", "q4_k", "f16"}) {
    auto r = load("{ convert_to: " + v + " }");
    INFO(v);
    REQUIRE(r.ok());
    CHECK(r.pipeline.format.convert_to == v);
    CHECK(convert::convert_to_type(r.pipeline.format.convert_to));
  }
  CHECK(load("{ }").pipeline.format.convert_to.empty());
  auto bad = load("{ convert_to: q8 }");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(pipeline::format_diagnostic(bad.diagnostics.front()),
             Catch::Contains("p.yaml:2:") && Catch::Contains("'format.convert_to' must be one of") &&
                 Catch::Contains("q8_0") && Catch::Contains("q4_k") && Catch::Contains("f16") &&
                 Catch::Contains("got 'q8'"));
  auto key = load("{ convert: q8_0 }");
  REQUIRE_FALSE(key.ok());
  CHECK_THAT(pipeline::format_diagnostic(key.diagnostics.front()), Catch::Contains("convert"));
}

TEST_CASE("pipeline: format.fp8_activations is weight_only or static, weight_only by default", "[pipeline]") {
  const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  pipeline::LoadOptions lo;
  lo.fixed_search_dirs = &dirs;
  lo.validate.model_file = false;
  auto load = [&](const std::string& format) {
    return pipeline::load_pipeline_from_text("model: m.gguf\nformat: " + format + "\nsampling: [ greedy ]\n", "p.yaml", lo);
  };
  CHECK(load("{ }").pipeline.format.fp8_activations == "weight_only");
  for (const std::string v : {"weight_only", "static"}) {
    auto r = load("{ fp8_activations: " + v + " }");
    INFO(v);
    REQUIRE(r.ok());
    CHECK(r.pipeline.format.fp8_activations == v);
  }
  auto bad = load("{ fp8_activations: dynamic }");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(pipeline::format_diagnostic(bad.diagnostics.front()),
             Catch::Contains("p.yaml:2:") && Catch::Contains("'format.fp8_activations' must be one of") &&
                 Catch::Contains("weight_only") && Catch::Contains("static") && Catch::Contains("got 'dynamic'"));
}
