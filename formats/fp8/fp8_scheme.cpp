#include "fp8_scheme.hpp"

#include <cmath>
#include <cstring>

#include "companion.hpp"
#include "names_text.hpp"

namespace sy::fp8 {
namespace {

using hfq::Dtype;
using hfq::ends_with;

// `module.input_scale` of a static-activation checkpoint: one positive finite value (F32
// scalar in transformers' fp8, BF16 [1] in compressed-tensors), or 0 when the linear has none.
Result<float> input_scale(const hf::TensorFinder& f, const std::string& module) {
  const hfq::FoundTensor t = hfq::maybe(f, module, "input_scale");
  if (!t.tensor) return 0.0f;
  if (auto st = hfq::expect_dtype(t, {Dtype::F32, Dtype::BF16, Dtype::F16}); !st) return st;
  if (hfq::elements(t) != 1)
    return error::corrupt(t.file + ": tensor " + hf::quoted_text(t.tensor->name) + " has shape " +
                          hfq::shape_text(t.tensor->shape) + "; a static activation scale is one number per linear "
                          "(per-token or per-channel activation scales are not FP8 static checkpoints)");
  const float v = hfq::float_at(t, 0);
  if (!(v > 0) || !std::isfinite(v))
    return error::corrupt(t.file + ": tensor " + hf::quoted_text(t.tensor->name) + " is " + std::to_string(v) +
                          "; an activation scale is a positive finite number, so the checkpoint is damaged "
                          "(download it again)");
  return v;
}

class Fp8Scheme final : public hf::QuantScheme {
 public:
  explicit Fp8Scheme(Settings s) : s_(s) {}

  std::string module_of(const hf::StTensor& t) const override {
    const bool fp8 = t.dtype == Dtype::F8_E4M3 || t.dtype == Dtype::F8_E5M2;
    return fp8 && ends_with(t.name, ".weight") ? t.name.substr(0, t.name.size() - 7) : std::string();
  }
  bool companion(const hf::StTensor& t) const override {
    return ends_with(t.name, ".weight_scale") || ends_with(t.name, ".weight_scale_inv") ||
           ends_with(t.name, ".input_scale");
  }
  Result<hf::DecodedLinear> decode(const hf::TensorFinder& f, const std::string& module) const override;

 private:
  Settings s_;
};

Result<hf::DecodedLinear> Fp8Scheme::decode(const hf::TensorFinder& f, const std::string& module) const {
  const hf::FoundTensor w = f.find(module + ".weight");
  const auto& shape = w.tensor->shape;
  if (shape.size() != 2 || shape[0] <= 0 || shape[1] <= 0)
    return error::corrupt(w.file + ": tensor " + hf::quoted_text(w.tensor->name) + " has shape " + hfq::shape_text(shape) +
                          "; an FP8 linear's weight is [output features, input features]");
  const int64_t out = shape[0], in = shape[1];
  if (in % 128 != 0)
    return error::unsupported("the FP8 linear " + hf::quoted_text(module) + " has " + std::to_string(in) +
                              " input features; Switchyard stores FP8 rows in blocks of 128 with their scale, so rows "
                              "of other lengths are planned (convert the checkpoint to BF16 and quantize it instead)");
  hfq::FoundTensor sc = hfq::maybe(f, module, "weight_scale_inv");
  if (!sc.tensor) sc = hfq::maybe(f, module, "weight_scale");
  if (!sc.tensor)
    return error::corrupt("the fp8 checkpoint in " + f.dir().string() + " has neither " +
                          hf::quoted_text(module + ".weight_scale") + " nor " + hf::quoted_text(module + ".weight_scale_inv") +
                          ", the scale the FP8 weight " + hf::quoted_text(w.tensor->name) +
                          " needs; the download is incomplete (download it again)");
  if (auto st = hfq::expect_dtype(sc, {Dtype::F32, Dtype::BF16, Dtype::F16}); !st) return st;
  const uint64_t n_scales = hfq::elements(sc);
  // Which scale covers (row n, input column k).
  int64_t bo = 0, bi = 0;  // 0: the whole dimension
  if (n_scales == 1) {
    bo = out, bi = in;
  } else if (s_.granularity == Granularity::block) {
    bo = s_.block_out, bi = s_.block_in;
    if (auto st = hfq::expect_shape(sc, {(out + bo - 1) / bo, (in + bi - 1) / bi},
                                    "the weight " + hfq::shape_text(shape) + " in blocks of " + std::to_string(bo) +
                                        " x " + std::to_string(bi));
        !st)
      return st;
  } else if (n_scales == static_cast<uint64_t>(out) && sc.tensor->shape.front() == out) {
    bo = 1, bi = in;
  } else {
    return error::corrupt(sc.file + ": tensor " + hf::quoted_text(sc.tensor->name) + " has shape " +
                          hfq::shape_text(sc.tensor->shape) + "; a per-tensor scale has one element and a per-channel "
                          "scale " + std::to_string(out) + " (one per output row of " + hfq::shape_text(shape) +
                          "); the checkpoint is damaged or config.json names another strategy");
  }
  const int64_t scale_cols = (in + bi - 1) / bi;
  hf::DecodedLinear d;
  d.type = w.tensor->dtype == Dtype::F8_E5M2 ? StorageType::FP8_E5M2_B128 : StorageType::FP8_E4M3_B128;
  d.rows = out;
  d.cols = in;
  const int64_t blocks = in / 128;
  d.bytes.resize(static_cast<size_t>(out * blocks * 132));
  for (int64_t n = 0; n < out; ++n)
    for (int64_t b = 0; b < blocks; ++b) {
      std::byte* dst = d.bytes.data() + (n * blocks + b) * 132;
      const float s = hfq::float_at(sc, static_cast<uint64_t>((n / bo) * scale_cols + (b * 128) / bi));
      std::memcpy(dst, &s, 4);
      std::memcpy(dst + 4, w.data.data() + n * in + b * 128, 128);
    }
  if (s_.static_activations) {
    auto is = input_scale(f, module);
    if (!is) return is.status();
    d.input_scale = *is;
  }
  return d;
}

Result<std::pair<int64_t, int64_t>> block_sizes(const nlohmann::json& v, const std::string& where) {
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer() || v[0].get<int64_t>() <= 0 ||
      v[1].get<int64_t>() <= 0)
    return error::invalid_argument(where + " is " + v.dump() + "; it should be [rows, columns], e.g. [128, 128]");
  const int64_t bo = v[0].get<int64_t>(), bi = v[1].get<int64_t>();
  if (bi % 128 != 0)
    return error::unsupported(where + " is " + v.dump() + "; Switchyard keeps one scale per 128 input columns, so "
                              "blocks must span a multiple of 128 columns ([128, 128] is what DeepSeek and Qwen ship)");
  return std::pair{bo, bi};
}

Result<Settings> transformers_fp8(const hfq::QConfig& q) {
  Settings s;
  auto fmt = q.text("fmt", std::string("e4m3"));
  if (!fmt) return fmt.status();
  if (*fmt != "e4m3")
    return error::unsupported(q.where("fmt") + " is " + hf::quoted_text(*fmt) + "; transformers' fp8 checkpoints are e4m3");
  auto scheme = q.text("activation_scheme", std::string("dynamic"));
  if (!scheme) return scheme.status();
  if (*scheme != "dynamic" && *scheme != "static")
    return error::invalid_argument(q.where("activation_scheme") + " is " + hf::quoted_text(*scheme) +
                                   "; it is \"dynamic\" or \"static\"");
  s.static_activations = *scheme == "static";
  if (const auto it = q.json().find("weight_block_size"); it != q.json().end() && !it->is_null()) {
    auto b = block_sizes(*it, q.where("weight_block_size"));
    if (!b) return b.status();
    s.granularity = Granularity::block;
    s.block_out = b->first, s.block_in = b->second;
  }
  return s;
}

Result<Settings> compressed_tensors(const hfq::QConfig& q) {
  auto format = q.text("format", std::string("float-quantized"));
  if (!format) return format.status();
  if (*format != "float-quantized" && *format != "naive-quantized")
    return error::unsupported(q.where("format") + " is " + hf::quoted_text(*format) +
                              "; the fp8 plugin reads compressed-tensors' float-quantized (FP8) checkpoints; packed "
                              "integer ones (pack-quantized) are planned");
  const auto groups = q.json().find("config_groups");
  if (groups == q.json().end() || !groups->is_object() || groups->empty())
    return error::invalid_argument(q.where("config_groups") + " is missing or empty; compressed-tensors names the "
                                   "weights' quantization there");
  std::optional<Settings> found;
  for (const auto& [name, g] : groups->items()) {
    const std::string at = q.where("config_groups." + name + ".weights");
    const auto w = g.is_object() ? g.find("weights") : g.end();
    if (!g.is_object() || w == g.end() || !w->is_object())
      return error::invalid_argument(at + " is missing; each config group says how its weights are quantized");
    const hfq::QConfig wq(*w, "");
    auto type = wq.text("type", std::nullopt);
    auto bits = wq.integer("num_bits", std::nullopt);
    auto strategy = wq.text("strategy", std::string("tensor"));
    if (!type || !bits || !strategy)
      return error::invalid_argument(at + " lacks a string 'type', an integer 'num_bits' or a string 'strategy'");
    if (*type != "float" || *bits != 8)
      return error::unsupported(at + " quantizes to " + std::to_string(*bits) + "-bit " + *type +
                                "; the fp8 plugin reads 8-bit float weights (integer compressed-tensors checkpoints "
                                "are planned)");
    Settings s;
    if (*strategy == "tensor") {
      s.granularity = Granularity::tensor;
    } else if (*strategy == "channel") {
      s.granularity = Granularity::channel;
    } else if (*strategy == "block") {
      const auto bs = w->find("block_structure");
      auto b = block_sizes(bs == w->end() ? nlohmann::json() : *bs, at + ".block_structure");
      if (!b) return b.status();
      s.granularity = Granularity::block;
      s.block_out = b->first, s.block_in = b->second;
    } else {
      return error::unsupported(at + ".strategy is " + hf::quoted_text(*strategy) +
                                "; the fp8 plugin reads per-tensor, per-channel and block scales (\"tensor\", "
                                "\"channel\", \"block\")");
    }
    const auto a = g.find("input_activations");
    if (a != g.end() && a->is_object()) {
      const auto dyn = a->find("dynamic");
      s.static_activations = dyn != a->end() && dyn->is_boolean() && !dyn->get<bool>();
    }
    if (found && (found->granularity != s.granularity || found->block_out != s.block_out || found->block_in != s.block_in))
      return error::unsupported(q.where("config_groups") + " quantizes groups of layers differently; the fp8 plugin "
                                "reads checkpoints with one weight scheme");
    found = s;
  }
  return *found;
}

}  // namespace

Result<std::unique_ptr<hf::QuantScheme>> make_scheme(const nlohmann::json& qcfg, const std::string& config_file) {
  if (!qcfg.is_object())
    return error::invalid_argument(config_file + ": quantization_config is not an object; an FP8 checkpoint has "
                                   "{\"quant_method\": \"fp8\", ...} or {\"quant_method\": \"compressed-tensors\", ...}");
  const hfq::QConfig q(qcfg, config_file);
  auto method = q.text("quant_method", std::nullopt);
  if (!method) return method.status();
  auto s = *method == "compressed-tensors" ? compressed_tensors(q) : transformers_fp8(q);
  if (!s) return s.status();
  return std::unique_ptr<hf::QuantScheme>(new Fp8Scheme(*s));
}

}  // namespace sy::fp8
