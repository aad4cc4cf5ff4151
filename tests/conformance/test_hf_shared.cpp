// Hugging Face folders (shared/formats: tiny Qwen3 and Qwen3-MoE checkpoints in BF16) through
// the hf plugin and the engine, against the float64 reference logits beside each
// checkpoint (logits.json, SPEC.md): the same model the engine runs from GGUF, read from
// config.json + safetensors.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <iostream>

#include "engine_support.hpp"
#include "hf_model.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"
#include "writer.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kFormats = fs::path(SY_SHARED_DIR) / "formats";

// Tolerance for BF16 weights (docs/formats.md, "Tolerance of the BF16 checkpoints"): the CPU
// kernels round each matmul's activations to BF16 (as llama.cpp's CPU path does), a relative
// error of at most u = 2^-9 per element. A dot product of n terms then moves by about
// u/sqrt(3) * sqrt(sum (w_i x_i)^2) (independent roundings), about 1.1e-3 of the product's
// own magnitude here; through 2 layers of 7 matmuls and the head that compounds to about
// 1% of the logits' scale (an estimate, not a proof: hence a factor 2 over it). The logits
// have max |l| 3.4-6.8 per row and std 1.1, so each logit is held to
// 0.02 * (1 + max |reference logit| of its row), 0.09-0.16 here, and the rms of each row to
// a quarter of that; argmax wherever the reference margin exceeds twice the row's bound.
constexpr double kRelative = 0.02;

struct RowDiff {
  double max_abs = 0, rms = 0;
};

RowDiff diff(const float* got, const std::vector<double>& want) {
  RowDiff d;
  for (size_t k = 0; k < want.size(); ++k) {
    const double e = std::abs(static_cast<double>(got[k]) - want[k]);
    d.max_abs = std::max(d.max_abs, e);
    d.rms += e * e;
  }
  d.rms = std::sqrt(d.rms / static_cast<double>(want.size()));
  return d;
}

double row_bound(const std::vector<double>& want, double relative) {
  double m = 0;
  for (double v : want) m = std::max(m, std::abs(v));
  return relative * (1 + m);
}

// Every position's logits from one batch of all 28 ids, then again teacher-forced one token
// per step after the prompt; both against logits.json.
void check_checkpoint(const fs::path& dir, const fs::path& run_path, double relative) {
  std::ifstream in(dir / "logits.json");
  REQUIRE(in);
  const json ref = json::parse(in);
  const auto ids = ref["ids"].get<std::vector<int32_t>>();
  const auto n_prompt = ref["n_prompt"].get<size_t>();
  REQUIRE(ids.size() == 28);
  const auto rows = ref["logits"].get<std::vector<std::vector<double>>>();
  REQUIRE(rows.size() == ids.size());

  auto rt = sy::test::bring_up_model(run_path);
  auto& e = *rt->engine;
  REQUIRE(e.n_vocab() == 512);
  REQUIRE(e.kv().add(0).is_ok());
  std::vector<sy::engine::BatchToken> batch;
  for (int32_t t : ids) batch.push_back({0, t, true});
  std::vector<float> all;
  REQUIRE(e.decode(batch, all).is_ok());
  REQUIRE(all.size() == ids.size() * 512);

  double worst = 0, worst_ratio = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const double bound = row_bound(rows[i], relative);
    const RowDiff d = diff(all.data() + i * 512, rows[i]);
    worst = std::max(worst, d.max_abs);
    worst_ratio = std::max(worst_ratio, d.max_abs / bound);
    INFO("position " << i << ": max |diff| " << d.max_abs << ", rms " << d.rms << ", bound " << bound);
    CHECK(d.max_abs <= bound);
    CHECK(d.rms <= bound / 4);
    if (ref["margin"][i].get<double>() > 2 * bound)
      CHECK(sy::test::argmax(all.data() + i * 512, 512) == ref["argmax"][i].get<int32_t>());
  }

  const std::vector<int32_t> prompt(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n_prompt));
  const std::vector<int32_t> forced(ids.begin() + static_cast<std::ptrdiff_t>(n_prompt), ids.end() - 1);
  REQUIRE(e.kv().remove(0).is_ok());
  const auto steps = sy::test::teacher_forced(e, 0, prompt, forced);
  REQUIRE(steps.size() == ids.size() - n_prompt);
  double worst_step = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    const size_t pos = n_prompt - 1 + k;
    const RowDiff d = diff(steps[k].data(), rows[pos]);
    worst_step = std::max(worst_step, d.max_abs);
    INFO("teacher-forced position " << pos << ": max |diff| " << d.max_abs);
    CHECK(d.max_abs <= row_bound(rows[pos], relative));
  }
  std::cout << dir.parent_path().filename().string() << "/" << dir.filename().string()
            << ": max |logit diff| " << worst << " in one batch (worst " << worst_ratio
            << " of its bound), " << worst_step << " teacher-forced\n";
}

}  // namespace

TEST_CASE("hf: BF16 checkpoints give the reference logits", "[hf][engine]") {
  for (const char* v : {"qwen3-tiny/bf16", "qwen3moe-tiny/bf16", "qwen3moe-tiny/bf16-fused-experts"}) {
    DYNAMIC_SECTION(v) { check_checkpoint(kFormats / v, kFormats / v, kRelative); }
  }
}

// The mapping alone, without BF16 activation rounding: the folder's canonical tensors, every
// one widened to F32 through the hf reader (view or read) and written as an F32 GGUF with
// the reader's metadata, run by the engine. F32 weights take the F32 kernels, which round
// nothing, so the logits must equal the float64 reference to float32 accuracy (llama.cpp on
// such a GGUF: 4.6e-6, SPEC.md); 1e-5 of the row's largest logit leaves room for float32
// summation order only. A wrong name, permutation, stacking or hyper-parameter moves logits by O(1).
TEST_CASE("hf: the mapped tensors widened to F32 give the reference logits to float32 accuracy", "[hf][engine]") {
  for (const char* v : {"qwen3-tiny/bf16", "qwen3moe-tiny/bf16", "qwen3moe-tiny/bf16-fused-experts"}) {
    DYNAMIC_SECTION(v) {
      auto m = sy::hf::Model::open(kFormats / v);
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
        if (d.type != sy::StorageType::F32) {
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
      sy::test::TempDir tmp;
      REQUIRE(w.write(tmp / "f32.gguf").is_ok());
      check_checkpoint(kFormats / v, tmp / "f32.gguf", 1e-5);
    }
  }
}
