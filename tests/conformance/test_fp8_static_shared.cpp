// FP8 checkpoints with static activation scales (SPEC.md, FP8 E4M3, "activation_scheme:
// static"), run with format.fp8_activations: static.
// - The fp8 reader emits each reference layer's input_scale exactly as reference.safetensors
//   has it (one per linear; [E] for stacked experts).
// - The fp8_qdq op applied to L.x with L.input_scale gives L.x_qdq bit for bit, on the CPU
//   and on Vulkan.
// - Whole models against logits.json (weight-only float64) within the bound derived below,
//   and moved away from the weight-only run (the key is not silently ignored).
// - Models without static scales are refused at load, naming the key.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>

#include "conformance/case_builder.hpp"
#include "conformance/run_op.hpp"
#include "conformance/suite_internal.hpp"
#include "engine_support.hpp"
#include "fp8_scheme.hpp"
#include "hf_model.hpp"
#include "names.hpp"
#include "safetensors.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"
#include "writer.hpp"
#include "skip.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kFormats = fs::path(SY_SHARED_DIR) / "formats";
const sy::hf::QuantReader kFp8{"fp8", sy::fp8::make_scheme};

struct Static {
  const char* dir;
  std::vector<std::string> layers;
};

// The variants with static scales and their reference layers, from index.json.
std::vector<Static> static_variants() {
  std::ifstream in(kFormats / "index.json");
  REQUIRE(in);
  const json index = json::parse(in);
  std::vector<Static> out;
  for (const char* v : {"qwen3-tiny/fp8-per-tensor", "qwen3moe-tiny/fp8-ct-per-tensor"}) {
    const fs::path p(v);
    const auto& var = index["models"][p.parent_path().string()]["variants"][p.filename().string()];
    REQUIRE(var.is_object());
    out.push_back({v, var["reference_layers"].get<std::vector<std::string>>()});
  }
  return out;
}

std::vector<float> f32_tensor(const sy::hf::SafetensorsFile& f, const std::string& name) {
  const auto* t = f.find(name);
  REQUIRE(t);
  REQUIRE(t->dtype == sy::hf::Dtype::F32);
  std::vector<float> v(t->bytes / 4);
  std::memcpy(v.data(), f.data(*t).data(), t->bytes);
  return v;
}

std::vector<float> source_f32(const sy::ModelSource& m, const std::string& name) {
  const auto ts = m.tensors();
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i].name == name) {
      REQUIRE(ts[i].type == sy::StorageType::F32);
      std::vector<float> v(ts[i].bytes / 4);
      REQUIRE(m.read(i, 0, std::as_writable_bytes(std::span(v))).is_ok());
      return v;
    }
  FAIL("the reader emitted no " << name);
  return {};
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

TEST_CASE("fp8 static: the reader emits each linear's input_scale as the checkpoint has it", "[hfquant][fp8static]") {
  for (const Static& v : static_variants()) {
    DYNAMIC_SECTION(v.dir) {
      auto m = sy::hf::Model::open(kFormats / v.dir, &kFp8);
      INFO((m ? std::string() : m.status().message()));
      REQUIRE(m.has_value());
      auto ref = sy::hf::SafetensorsFile::open(kFormats / v.dir / "reference.safetensors");
      REQUIRE(ref.has_value());
      for (const std::string& layer : v.layers) {
        INFO(layer);
        const sy::hf::Mapped mp = sy::hf::map_name(layer + ".weight", (*m)->config());
        const std::string base = mp.name.substr(0, mp.name.size() - 7);
        const auto got = source_f32(**m, base + ".input_scale");
        const auto want = f32_tensor(**ref, layer + ".input_scale");
        REQUIRE(want.size() == 1);
        if (mp.expert >= 0) {
          REQUIRE(static_cast<int64_t>(got.size()) == (*m)->config().n_expert);
          CHECK(bits(got[static_cast<size_t>(mp.expert)]) == bits(want[0]));
        } else {
          REQUIRE(got.size() == 1);
          CHECK(bits(got[0]) == bits(want[0]));
        }
      }
    }
  }
}

namespace {

// fp8_qdq on dev applied to every static variant's reference layers: L.x_qdq bit for bit.
void check_qdq_layers(sy::Device& dev) {
  for (const Static& v : static_variants()) {
    auto ref = sy::hf::SafetensorsFile::open(kFormats / v.dir / "reference.safetensors");
    REQUIRE(ref.has_value());
    for (const std::string& layer : v.layers) {
      INFO(v.dir << " " << layer);
      const auto x = f32_tensor(**ref, layer + ".x");
      const auto s = f32_tensor(**ref, layer + ".input_scale");
      const auto want = f32_tensor(**ref, layer + ".x_qdq");
      const auto* xt = (*ref)->find(layer + ".x");
      const int64_t cols = xt->shape.back(), rows = static_cast<int64_t>(x.size()) / cols;
      sy::conformance::detail::Builder b(sy::OpKind::fp8_qdq, sy::StorageType::F32, "F32", layer);
      const int32_t xi = b.f32_values(x, {cols, rows}, "x");
      const int32_t si = b.f32_values(s, {1}, "scale");
      const int32_t d = b.dst(sy::StorageType::F32, {cols, rows});
      const sy::conformance::Case c = b.finish({xi, si}, d);
      auto out = sy::conformance::run_case(dev, c);
      REQUIRE(out.has_value());
      const auto& got = out->values.at(0);
      REQUIRE(got.size() == want.size());
      size_t differ = 0, changed = 0;
      for (size_t k = 0; k < want.size(); ++k) {
        differ += bits(static_cast<float>(got[k])) != bits(want[k]);
        changed += want[k] != x[k];
      }
      CHECK(differ == 0);
      CHECK(changed > want.size() / 2);  // the reference does quantize
    }
  }
}

}  // namespace

// The op as the scheduler runs it on the scalar CPU backend (buffers, copies, execution).
TEST_CASE("fp8 static: fp8_qdq on the CPU gives the reference activation bit for bit", "[hfquant][fp8static]") {
  sy::registry::Registry reg(std::vector<sy::registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  auto cpu = sy::conformance::open_scalar_cpu(reg);
  REQUIRE(cpu.has_value());
  check_qdq_layers(*cpu->device);
}

// The same on Vulkan (lavapipe in CI): its shader ports the SDK's encoder and divides exactly.
TEST_CASE("fp8 static: fp8_qdq on Vulkan gives the reference activation bit for bit", "[hfquant][fp8static][vulkan]") {
  sy::registry::Registry reg(std::vector<sy::registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  if (!reg.find(sy::ComponentKind::backend, "vulkan")) {
    sy::test::skip_unless_ci("the Vulkan backend is not built here");
    return;
  }
  auto be = reg.create_backend("vulkan", {});
  if (!be) {
    sy::test::skip_unless_ci("no Vulkan device: " + be.status().message());
    return;
  }
  check_qdq_layers((*be)->device(0));
}

namespace {

double row_max(const std::vector<double>& r) {
  double m = 0;
  for (double v : r) m = std::max(m, std::abs(v));
  return m;
}

std::vector<float> all_logits(const fs::path& dir, const std::string& format, sy::test::EngineOptions o = {}) {
  std::ifstream in(dir / "logits.json");
  const json ref = json::parse(in);
  const auto ids = ref["ids"].get<std::vector<int32_t>>();
  o.format = format;
  auto rt = sy::test::bring_up_model(dir, o);
  auto& e = *rt->engine;
  REQUIRE(e.kv().add(0).is_ok());
  std::vector<sy::engine::BatchToken> batch;
  for (int32_t t : ids) batch.push_back({0, t, true});
  std::vector<float> all;
  REQUIRE(e.decode(batch, all).is_ok());
  return all;
}

}  // namespace

// Tolerance. logits.json is the weight-only float64 forward; the static run also rounds the
// input of every FP8 linear to E4M3: 4 significant bits, a relative error of at most
// u = 2^-4 per element (half a step of 2^-3; saturation aside, which a calibrated scale
// avoids), about u / sqrt(3) = 3.6e-2 rms for independent roundings. test_hf_shared.cpp
// derives 0.02 relative for the same models with activations rounded to BF16 at 2^-9 per
// element (1.1e-3 rms: about 1% of the logits' scale through 2 layers of 7 matmuls and the
// head, times 2). The error grows linearly with u while it is small, so E4M3's 2^-4 is
// 2^5 = 32 times that: 32 x 0.02 = 0.64 of (1 + max |reference logit|) per row (the
// lm_head, left in BF16 by the checkpoint, adds BF16's 0.02 in quadrature: 0.6403).
// The run must also move: float32 reordering moves logits by ~1e-5 of the row scale, so a
// static run that differs from the weight-only run by less than 1e-3 of it somewhere at
// most has not quantized anything.
namespace {

// The static run of every variant within `relative` of logits.json, and moved from the
// weight-only run by more than 1e-3 of the row scale; `o` says where it runs.
void check_static_logits(const sy::test::EngineOptions& o, const char* where) {
  const double relative = 0.64;
  for (const Static& v : static_variants()) {
    DYNAMIC_SECTION(v.dir) {
      const fs::path dir = kFormats / v.dir;
      std::ifstream in(dir / "logits.json");
      const json ref = json::parse(in);
      const auto rows = ref["logits"].get<std::vector<std::vector<double>>>();
      const auto nv = rows.front().size();
      const auto stat = all_logits(dir, "{ fp8_activations: static }", o);
      const auto weight_only = all_logits(dir, "{ fp8_activations: weight_only }", o);
      REQUIRE(stat.size() == rows.size() * nv);
      double worst = 0, moved = 0, moved_rel = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        const double scale = 1 + row_max(rows[i]);
        double d = 0, m = 0;
        for (size_t k = 0; k < nv; ++k) {
          d = std::max(d, std::abs(stat[i * nv + k] - rows[i][k]));
          m = std::max(m, static_cast<double>(std::abs(stat[i * nv + k] - weight_only[i * nv + k])));
        }
        INFO("position " << i << ": max |diff| " << d << ", bound " << relative * scale);
        CHECK(d <= relative * scale);
        worst = std::max(worst, d / (relative * scale));
        moved = std::max(moved, m);
        moved_rel = std::max(moved_rel, m / scale);
      }
      CHECK(moved_rel > 1e-3);
      std::cout << v.dir << where << ": static activations, worst logit diff " << worst << " of its bound; moved from "
                << "weight-only by up to " << moved << " (" << moved_rel << " of the row scale)\n";
    }
  }
}

}  // namespace

TEST_CASE("fp8 static: format.fp8_activations static gives the reference logits within E4M3's bound, and moves them",
          "[hfquant][fp8static][engine]") {
  check_static_logits({}, "");
}

// The same with every layer on Vulkan under strict: the FP8 weights, fp8_qdq and the rest of
// the layers run there. The bound is the derivation's above, which no device changes.
TEST_CASE("fp8 static: the same bound with the layers on Vulkan", "[hfquant][fp8static][vulkan]") {
  sy::registry::Registry reg(std::vector<sy::registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  if (!reg.find(sy::ComponentKind::backend, "vulkan")) {
    sy::test::skip_unless_ci("the Vulkan backend is not built here");
    return;
  }
  if (auto be = reg.create_backend("vulkan", {}); !be) {
    sy::test::skip_unless_ci("no Vulkan device: " + be.status().message());
    return;
  }
  sy::test::EngineOptions o;
  o.backends = "[ vulkan, { plugin: cpu, threads: 2 } ]";
  o.placement = "{ gpu_layers: all }";
  o.strict = true;
  check_static_logits(o, " on Vulkan");
}

TEST_CASE("fp8 static: a model without static activation scales is refused, naming the key", "[hfquant][fp8static]") {
  sy::test::EngineOptions o;
  o.format = "{ fp8_activations: static }";
  const auto refused = [&](const fs::path& model) {
    try {
      sy::test::bring_up_model(model, o);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // A dynamic-scheme FP8 checkpoint and an unquantized one.
  for (const char* v : {"qwen3-tiny/fp8-block128", "qwen3-tiny/bf16"}) {
    INFO(v);
    const std::string why = refused(kFormats / v);
    CHECK_THAT(why, Catch::Contains("format.fp8_activations") && Catch::Contains("no static activation scales"));
  }
  // A GGUF: the static checkpoint's tensors widened to F32, without their scales.
  auto m = sy::hf::Model::open(kFormats / "qwen3-tiny/fp8-per-tensor", &kFp8);
  REQUIRE(m.has_value());
  sy::gguf::Writer w;
  for (const auto& [k, val] : (*m)->metadata().entries()) w.add(k, val);
  std::vector<std::vector<std::byte>> data;
  const auto ts = (*m)->tensors();
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].name.ends_with(".input_scale")) continue;
    std::vector<std::byte> raw(ts[i].bytes);
    REQUIRE((*m)->read(i, 0, raw).is_ok());
    sy::TensorDesc d = ts[i];
    if (d.type != sy::StorageType::F32) {  // widened, as GGUF has no FP8 block type
      std::vector<std::byte> f(d.elements() * 4);
      REQUIRE(sy::dequantize_row(d.type, raw.data(), reinterpret_cast<float*>(f.data()),
                                 static_cast<int64_t>(d.elements())).is_ok());
      raw = std::move(f);
      d.type = sy::StorageType::F32;
      d.bytes = raw.size();
    }
    data.push_back(std::move(raw));
    w.add_tensor(d, data.back());
  }
  sy::test::TempDir tmp;
  REQUIRE(w.write(tmp / "m.gguf").is_ok());
  const std::string why = refused(tmp / "m.gguf");
  CHECK_THAT(why, Catch::Contains("format.fp8_activations") && Catch::Contains("no static activation scales"));
}
