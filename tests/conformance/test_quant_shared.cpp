// Quantized Hugging Face checkpoints (shared/formats, SPEC.md: AWQ, GPTQ v1/v2 including
// act-order, FP8 per tensor / per block / compressed-tensors) through the awq, gptq and fp8
// readers: every variant the index lists, so a variant added to the shared data is checked
// without a change here.
// - The reference layers dequantize bit for bit to reference.safetensors' weight_deq.
// - Their products with the reference x, through the CPU kernel of the decoded type, stay
//   within the float32 summation bound of y (x @ weight_deq^T in float64, rounded once).
// - The whole model, every linear widened to F32, gives logits.json to float32 accuracy, and
//   on the decoded types' own kernels within the activation-rounding bound derived below.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>

#include "awq_scheme.hpp"
#include "engine_support.hpp"
#include "fp8_scheme.hpp"
#include "gptq_scheme.hpp"
#include "hf_model.hpp"
#include "logits_json.hpp"
#include "dot.hpp"
#include "isa.hpp"
#include "names.hpp"
#include "safetensors.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"
#include "writer.hpp"
#include "skip.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using sy::test::check_logits;
using sy::test::row_max;

namespace {

const fs::path kFormats = fs::path(SY_SHARED_DIR) / "formats";

struct Variant {
  std::string model, name;
  std::vector<std::string> reference_layers;
  [[nodiscard]] fs::path dir() const { return kFormats / model / name; }
};

std::vector<Variant> quantized_variants() {
  std::ifstream in(kFormats / "index.json");
  REQUIRE(in);
  const json index = json::parse(in);
  std::vector<Variant> out;
  for (const auto& [model, m] : index["models"].items())
    for (const auto& [name, v] : m["variants"].items())
      if (!v["quantization_config"].is_null())
        out.push_back({model, name, v["reference_layers"].get<std::vector<std::string>>()});
  REQUIRE(!out.empty());
  return out;
}

// The reader a checkpoint's config.json asks for.
sy::hf::QuantReader reader_for(const fs::path& dir) {
  std::ifstream in(dir / "config.json");
  const auto method = sy::hf::quantized_by(json::parse(in));
  REQUIRE(method);
  if (*method == "awq") return {"awq", sy::awq::make_scheme};
  if (*method == "gptq") return {"gptq", sy::gptq::make_scheme};
  REQUIRE(*method == "fp8");
  return {"fp8", sy::fp8::make_scheme};
}

size_t index_of(const sy::ModelSource& src, const std::string& name) {
  const auto ts = src.tensors();
  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i].name == name) return i;
  FAIL("no tensor " << name);
  return 0;
}

std::vector<float> f32_tensor(const sy::hf::SafetensorsFile& f, const std::string& name) {
  const auto* t = f.find(name);
  REQUIRE(t);
  REQUIRE(t->dtype == sy::hf::Dtype::F32);
  std::vector<float> v(t->bytes / 4);
  std::memcpy(v.data(), f.data(*t).data(), t->bytes);
  return v;
}

// One reference layer of the decoded model: its rows (in stored column order), the type,
// and the input order (empty: none).
struct Layer {
  sy::StorageType type{};
  int64_t rows = 0, cols = 0;
  std::vector<std::byte> bytes;
  std::vector<int32_t> order;
};

Layer decoded_layer(const sy::hf::Model& m, const std::string& module) {
  const sy::hf::Mapped mp = sy::hf::map_name(module + ".weight", m.config());
  REQUIRE(!mp.name.empty());
  const size_t i = index_of(m, mp.name);
  const sy::TensorDesc& d = m.tensors()[i];
  Layer l;
  l.type = d.type;
  l.cols = d.shape[0];
  l.rows = d.shape[1];
  const uint64_t per = d.bytes / (d.shape.size() == 3 ? static_cast<uint64_t>(d.shape[2]) : 1);
  l.bytes.resize(per);
  REQUIRE(m.read(i, mp.expert >= 0 ? per * static_cast<uint64_t>(mp.expert) : 0, l.bytes).is_ok());
  const std::string base = mp.name.substr(0, mp.name.size() - 7);  // without ".weight"
  for (size_t k = 0; k < m.tensors().size(); ++k)
    if (m.tensors()[k].name == base + ".input_order") {
      l.order.resize(static_cast<size_t>(l.cols));
      REQUIRE(m.read(k, 0, std::as_writable_bytes(std::span(l.order))).is_ok());
    }
  return l;
}

// W [rows][cols] in the checkpoint's column order.
std::vector<float> dequantized(const Layer& l) {
  std::vector<float> stored(static_cast<size_t>(l.rows * l.cols));
  REQUIRE(sy::dequantize_row(l.type, l.bytes.data(), stored.data(), l.rows * l.cols).is_ok());
  if (l.order.empty()) return stored;
  std::vector<float> w(stored.size());
  for (int64_t n = 0; n < l.rows; ++n)
    for (int64_t p = 0; p < l.cols; ++p) w[static_cast<size_t>(n * l.cols + l.order[static_cast<size_t>(p)])] = stored[static_cast<size_t>(n * l.cols + p)];
  return w;
}

}  // namespace

TEST_CASE("quantized checkpoints: reference layers dequantize bit for bit", "[hfquant]") {
  for (const Variant& v : quantized_variants()) {
    DYNAMIC_SECTION(v.model << "/" << v.name) {
      const auto reader = reader_for(v.dir());
      auto m = sy::hf::Model::open(v.dir(), &reader);
      INFO((m ? std::string() : m.status().message()));
      REQUIRE(m.has_value());
      auto ref = sy::hf::SafetensorsFile::open(v.dir() / "reference.safetensors");
      REQUIRE(ref.has_value());
      for (const std::string& layer : v.reference_layers) {
        INFO(layer);
        const Layer l = decoded_layer(**m, layer);
        const auto want = f32_tensor(**ref, layer + ".weight_deq");
        const auto got = dequantized(l);
        REQUIRE(got.size() == want.size());
        size_t differ = 0;
        for (size_t k = 0; k < got.size(); ++k) {
          uint32_t a, b;
          std::memcpy(&a, &got[k], 4);
          std::memcpy(&b, &want[k], 4);
          differ += a != b;
        }
        CHECK(differ == 0);
      }
    }
  }
}

// y[t][n] = sum_k x[t][k] W[n][k]: the decoded type's CPU kernel (this ISA's, or the generic
// one) against the float64 reference. A float32 dot of n terms, in any order and with or
// without FMA, is within gamma_n * sum |x_k W_k| of the exact value, gamma_n = n u / (1 - n u),
// u = 2^-24 (Higham, Accuracy and Stability, 3.1); the reference y is itself rounded once
// (half an ulp, u |y|). A kernel that quantizes activations is held to its own bound in the
// kernel tests; this one is the f32 path, so activations are given as F32.
TEST_CASE("quantized checkpoints: reference products within the float32 summation bound", "[hfquant]") {
  const auto isa = sy::cpu::detect_isa();
  for (const Variant& v : quantized_variants()) {
    DYNAMIC_SECTION(v.model << "/" << v.name) {
      const auto reader = reader_for(v.dir());
      auto m = sy::hf::Model::open(v.dir(), &reader);
      REQUIRE(m.has_value());
      auto ref = sy::hf::SafetensorsFile::open(v.dir() / "reference.safetensors");
      REQUIRE(ref.has_value());
      for (const std::string& layer : v.reference_layers) {
        INFO(layer);
        const Layer l = decoded_layer(**m, layer);
        const auto x = f32_tensor(**ref, layer + ".x");
        const auto y = f32_tensor(**ref, layer + ".y");
        const auto w = f32_tensor(**ref, layer + ".weight_deq");
        const int64_t tokens = static_cast<int64_t>(x.size()) / l.cols;
        REQUIRE(static_cast<int64_t>(y.size()) == tokens * l.rows);
        const sy::cpu::DotKernel k = sy::cpu::dot_kernel_generic(l.type, isa);
        REQUIRE(k.usable());
        const uint64_t row_bytes = l.bytes.size() / static_cast<uint64_t>(l.rows);
        const double u = std::ldexp(1.0, -24), n = static_cast<double>(l.cols), gamma = n * u / (1 - n * u);
        double worst = 0;
        for (int64_t t = 0; t < tokens; ++t) {
          // The kernel reads the activation in stored column order.
          std::vector<float> xs(static_cast<size_t>(l.cols));
          for (int64_t p = 0; p < l.cols; ++p)
            xs[static_cast<size_t>(p)] = x[static_cast<size_t>(t * l.cols + (l.order.empty() ? p : l.order[static_cast<size_t>(p)]))];
          for (int64_t r = 0; r < l.rows; ++r) {
            const float got = sy::cpu::row_dot(k, l.cols, l.bytes.data() + static_cast<uint64_t>(r) * row_bytes, xs.data());
            double mag = 0;
            for (int64_t c = 0; c < l.cols; ++c)
              mag += std::abs(static_cast<double>(x[static_cast<size_t>(t * l.cols + c)]) * w[static_cast<size_t>(r * l.cols + c)]);
            const double want = y[static_cast<size_t>(t * l.rows + r)];
            const double bound = gamma * mag + u * std::abs(want);
            worst = std::max(worst, std::abs(got - want) / bound);
            CHECK(std::abs(got - want) <= bound);
          }
        }
        std::cout << v.model << "/" << v.name << " " << layer << ": worst |y diff| " << worst << " of its bound\n";
      }
    }
  }
}

namespace {

struct RowDiff {
  double max_abs = 0;
};



// The decoded model with every tensor but the input orders widened to F32, as a GGUF.
void write_widened(const fs::path& dir, const fs::path& out) {
  const auto reader = reader_for(dir);
  auto m = sy::hf::Model::open(dir, &reader);
  REQUIRE(m.has_value());
  const sy::ModelSource& src = **m;
  sy::gguf::Writer w;
  for (const auto& [k, val] : src.metadata().entries()) w.add(k, val);
  std::vector<std::vector<std::byte>> data;
  const auto ts = src.tensors();
  for (size_t i = 0; i < ts.size(); ++i) {
    std::vector<std::byte> raw(ts[i].bytes);
    REQUIRE(src.read(i, 0, raw).is_ok());
    sy::TensorDesc d = ts[i];
    if (d.type != sy::StorageType::F32 && d.type != sy::StorageType::I32) {
      const uint64_t n = d.elements();
      std::vector<std::byte> f(n * 4);
      REQUIRE(sy::dequantize_row(d.type, raw.data(), reinterpret_cast<float*>(f.data()), static_cast<int64_t>(n)).is_ok());
      raw = std::move(f);
      d.type = sy::StorageType::F32;
      d.bytes = n * 4;
    }
    data.push_back(std::move(raw));
    w.add_tensor(d, data.back());
  }
  REQUIRE(w.write(out).is_ok());
}

// Per position of `ids` fed one token at a time: the logits, and per MoE layer the experts
// the token chose (the routing counts' change over its step).
struct Stepped {
  std::vector<std::vector<float>> logits;
  std::vector<std::vector<std::vector<int64_t>>> experts;  // [position][layer] -> chosen experts
};

Stepped step_through(const fs::path& run_path, const std::vector<int32_t>& ids, sy::test::EngineOptions o = {}) {
  o.routing_stats = true;
  auto rt = sy::test::bring_up_model(run_path, o);
  auto& e = *rt->engine;
  REQUIRE(e.kv().add(0).is_ok());
  Stepped s;
  std::vector<std::vector<uint64_t>> before = e.routing_counts();
  for (int32_t t : ids) {
    const sy::engine::BatchToken bt{0, t, true};
    std::vector<float> l;
    REQUIRE(e.decode({&bt, 1}, l).is_ok());
    s.logits.push_back(l);
    const auto& now = e.routing_counts();
    std::vector<std::vector<int64_t>> chosen(now.size());
    for (size_t layer = 0; layer < now.size(); ++layer)
      for (size_t x = 0; x < now[layer].size(); ++x)
        if (now[layer][x] != (layer < before.size() && x < before[layer].size() ? before[layer][x] : 0))
          chosen[layer].push_back(static_cast<int64_t>(x));
    s.experts.push_back(std::move(chosen));
    before = now;
  }
  return s;
}

}  // namespace

// The decoding alone: every tensor of the decoded model widened to F32 (the act-order input
// order kept as it is) and run as an F32 GGUF, whose kernels round nothing but float32 sums:
// within 1e-5 of each row's scale, as for the BF16 folders (test_hf_shared.cpp; llama.cpp on
// the same F32 weights: 4.6e-6, SPEC.md). A wrong code, zero, scale, order or group moves
// logits by O(0.1-1) (SPEC.md's vs_bf16 column).
TEST_CASE("quantized checkpoints: decoded and widened to F32, the reference logits to float32 accuracy", "[hfquant][engine]") {
  for (const Variant& v : quantized_variants()) {
    DYNAMIC_SECTION(v.model << "/" << v.name) {
      sy::test::TempDir tmp;
      write_widened(v.dir(), tmp / "f32.gguf");
      check_logits(v.dir(), tmp / "f32.gguf", 1e-5);
    }
  }
}

// The folders themselves through the engine: the decoded types on their own CPU kernels.
// The unquantized embeddings and lm_head stay BF16 or F16, whose kernels round activations to
// BF16 as in test_hf_shared.cpp, so every variant is held to at least that derived bound, 0.02
// relative; the FP8 kernels dot f32 activations and add float32 rounding only. The integer-group
// kernels quantize each activation block of 32 to int8 with scale d = max|x| / 127 (as
// llama.cpp's Q4_0 path does): an error uniform in +-d/2, std d / sqrt(12). For activations of
// roughly normal shape (block max ~2.1 sigma) that is 2.1 / 127 / sqrt(12) = 4.8e-3 sigma per
// element, against BF16 rounding's 2^-9 / sqrt(3) = 1.1e-3 |x| of test_hf_shared.cpp, whose
// derived bound is 0.02 relative: 4.3 times that gives 0.086, held as 0.09 (with the head's
// 0.02 added in quadrature, 0.088).
//
// MoE routing is not continuous: the reference's smallest gap between the 2nd and 3rd expert
// is 9.3e-5 (SPEC.md, router_min_topk_gap), far inside the activations' rounding, so a
// token may pick another expert and move its logits by O(1). Those positions are found, not
// guessed: the same ids run one token at a time through the decoded weights widened to F32
// (whose logits match the reference to 1e-5, above, so its routing is the reference's), and
// a position whose chosen experts differ in some layer is exempt from the per-logit bound.
// The bound holds everywhere else, and at most a quarter of the positions may flip (a wrong
// kernel moves every token's routing).
void check_logits_routed(const fs::path& dir, double relative, const sy::test::EngineOptions& opts = {}) {
  std::ifstream in(dir / "logits.json");
  REQUIRE(in);
  const json ref = json::parse(in);
  const auto ids = ref["ids"].get<std::vector<int32_t>>();
  const auto rows = ref["logits"].get<std::vector<std::vector<double>>>();
  sy::test::TempDir tmp;
  write_widened(dir, tmp / "f32.gguf");
  const Stepped want = step_through(tmp / "f32.gguf", ids);
  const Stepped got = step_through(dir, ids, opts);
  REQUIRE(!got.experts.front().empty());
  size_t flipped = 0;
  double worst = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const double bound = relative * (1 + row_max(rows[i]));
    double d = 0;
    for (size_t k = 0; k < rows[i].size(); ++k) d = std::max(d, std::abs(got.logits[i][k] - rows[i][k]));
    if (got.experts[i] != want.experts[i]) {
      ++flipped;
      std::cout << "  position " << i << ": another expert chosen, max |diff| " << d << "\n";
      continue;
    }
    worst = std::max(worst, d / bound);
    INFO("position " << i << ": max |diff| " << d << ", bound " << bound);
    CHECK(d <= bound);
  }
  CHECK(flipped * 4 <= ids.size());
  std::cout << dir.parent_path().filename().string() << "/" << dir.filename().string() << ": " << flipped
            << " positions routed differently; elsewhere worst logit diff " << worst << " of its bound (relative "
            << relative << ")\n";
}

bool is_moe(const fs::path& dir) {
  std::ifstream in(dir / "config.json");
  const json c = json::parse(in);
  for (const char* k : {"num_experts", "num_local_experts"})
    if (c.contains(k) && c[k].is_number_integer() && c[k].get<int64_t>() > 0) return true;
  return false;
}

TEST_CASE("quantized checkpoints: the reference logits on the decoded types' own kernels", "[hfquant][engine]") {
  for (const Variant& v : quantized_variants()) {
    DYNAMIC_SECTION(v.model << "/" << v.name) {
      const double relative = reader_for(v.dir()).method == "fp8" ? 0.02 : 0.09;
      if (is_moe(v.dir()))
        check_logits_routed(v.dir(), relative);
      else
        check_logits(v.dir(), v.dir(), relative);
    }
  }
}

// With every layer on Vulkan (lavapipe in CI): the decoded types are native there, so the
// quantized weights, the act-order gather and everything else of the layers run on the GPU
// (strict: a weight or node left to the CPU fails the load), with the same int8 activation
// blocks (grouped integers) or f32 activations (FP8) as the CPU's kernels. The same bounds
// hold.
TEST_CASE("quantized checkpoints: the reference logits with the layers on Vulkan", "[hfquant][vulkan]") {
  sy::test::EngineOptions o;
  o.strict = true;
  o.backends = "[ vulkan, { plugin: cpu, threads: 2 } ]";
  o.placement = "{ gpu_layers: all }";
  {
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
  }
  for (const Variant& v : quantized_variants()) {
    if (v.name != "gptq-w4g64-actorder-asym" && v.name != "fp8-block128" && v.model + v.name != "qwen3moe-tinyawq-w4g128")
      continue;
    DYNAMIC_SECTION(v.model << "/" << v.name) {
      const double relative = reader_for(v.dir()).method == "fp8" ? 0.02 : 0.09;
      if (is_moe(v.dir()))
        check_logits_routed(v.dir(), relative, o);
      else
        check_logits(v.dir(), v.dir(), relative, o);
    }
  }
}
