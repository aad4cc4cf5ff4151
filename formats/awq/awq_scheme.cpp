#include "awq_scheme.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "companion.hpp"
#include "int_groups.hpp"
#include "parallel.hpp"
#include "names_text.hpp"

namespace sy::awq {
namespace {

using hfq::Dtype;
using hfq::ends_with;

class AwqScheme final : public hf::QuantScheme {
 public:
  explicit AwqScheme(int64_t group) : group_(group) {}

  std::string module_of(const hf::StTensor& t) const override {
    return ends_with(t.name, ".qweight") ? t.name.substr(0, t.name.size() - 8) : std::string();
  }
  bool companion(const hf::StTensor& t) const override {
    return ends_with(t.name, ".qzeros") || ends_with(t.name, ".scales");
  }
  Result<hf::DecodedLinear> decode(const hf::TensorFinder& f, const std::string& module) const override;

 private:
  int64_t group_;  ///< -1: one group per row
};

Result<hf::DecodedLinear> AwqScheme::decode(const hf::TensorFinder& f, const std::string& module) const {
  auto qw = hfq::need(f, module, "qweight", "awq");
  if (!qw) return qw.status();
  if (auto st = hfq::expect_dtype(*qw, {Dtype::I32}); !st) return st;
  if (qw->tensor->shape.size() != 2 || qw->tensor->shape[0] <= 0 || qw->tensor->shape[1] <= 0)
    return error::corrupt(qw->file + ": tensor " + hf::quoted_text(qw->tensor->name) + " has shape " +
                          hfq::shape_text(qw->tensor->shape) +
                          "; AWQ stores qweight as [input features, output features / 8]");
  const int64_t in = qw->tensor->shape[0], out = qw->tensor->shape[1] * 8;
  const int64_t group = group_ < 0 ? in : group_;
  if (in % group != 0)
    return error::corrupt(qw->file + ": tensor " + hf::quoted_text(qw->tensor->name) + " has " + std::to_string(in) +
                          " input features, not a multiple of quantization_config.group_size " +
                          std::to_string(group) + "; the config does not belong to this checkpoint");
  const int64_t groups = in / group;
  const std::string why = "its qweight " + hfq::shape_text(qw->tensor->shape) + " and group_size " + std::to_string(group);
  auto qz = hfq::need(f, module, "qzeros", "awq");
  if (!qz) return qz.status();
  if (auto st = hfq::expect_dtype(*qz, {Dtype::I32}); !st) return st;
  if (auto st = hfq::expect_shape(*qz, {groups, out / 8}, why); !st) return st;
  auto sc = hfq::need(f, module, "scales", "awq");
  if (!sc) return sc.status();
  if (auto st = hfq::expect_dtype(*sc, {Dtype::F16}); !st) return st;
  if (auto st = hfq::expect_shape(*sc, {groups, out}, why); !st) return st;

  hfq::IntLinear q;
  q.bits = 4;
  q.rows = out;
  q.cols = in;
  q.group = group;
  q.codes.resize(static_cast<size_t>(out * in));
  q.zeros.resize(static_cast<size_t>(out * groups));
  q.scales.resize(static_cast<size_t>(out * groups));
  const int64_t words = out / 8;
  // A transpose: sixteen words of a qweight row (one cache line) hold 128 output rows. Each
  // chunk gathers a 128 x 64 tile on the stack and writes it out row by row, since writing
  // the rows column by column hits one cache set (rows are a power of two apart).
  hfq::parallel_for((words + 15) / 16, [&](int64_t c0, int64_t c1) {
    uint8_t tile[128][64];
    for (int64_t cb = c0; cb < c1; ++cb) {
      const int64_t cw = std::min<int64_t>(16, words - cb * 16);
      for (int64_t k0 = 0; k0 < in; k0 += 64) {
        const int64_t kk = std::min<int64_t>(64, in - k0);
        for (int64_t k = 0; k < kk; ++k)
          for (int64_t c = 0; c < cw; ++c) {
            const auto w = static_cast<uint32_t>(hfq::i32_at(*qw, static_cast<uint64_t>((k0 + k) * words + cb * 16 + c)));
            for (int i = 0; i < 8; ++i) tile[c * 8 + i][k] = static_cast<uint8_t>((w >> (4 * kNibbleOf[i])) & 15u);
          }
        for (int64_t r = 0; r < cw * 8; ++r)
          std::memcpy(q.codes.data() + (cb * 128 + r) * in + k0, tile[r], static_cast<size_t>(kk));
      }
    }
  });
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t c = 0; c < words; ++c) {
      const auto w = static_cast<uint32_t>(hfq::i32_at(*qz, static_cast<uint64_t>(g * words + c)));
      for (int i = 0; i < 8; ++i)
        q.zeros[static_cast<size_t>((8 * c + i) * groups + g)] = static_cast<uint16_t>((w >> (4 * kNibbleOf[i])) & 15u);
    }
    for (int64_t n = 0; n < out; ++n) {
      uint16_t h;
      std::memcpy(&h, sc->data.data() + static_cast<uint64_t>(g * out + n) * 2, 2);
      q.scales[static_cast<size_t>(n * groups + g)] = h;
    }
  }
  return hfq::to_int_groups(q, module);
}

}  // namespace

Result<std::unique_ptr<hf::QuantScheme>> make_scheme(const nlohmann::json& qcfg, const std::string& config_file) {
  if (!qcfg.is_object())
    return error::invalid_argument(config_file + ": quantization_config is not an object; AutoAWQ writes "
                                   "{\"quant_method\": \"awq\", \"bits\": 4, \"group_size\": 128, ...}");
  const hfq::QConfig q(qcfg, config_file);
  auto bits = q.integer("bits", std::nullopt);
  if (!bits) return bits.status();
  if (*bits != 4)
    return error::unsupported(q.where("bits") + " is " + std::to_string(*bits) +
                              "; AWQ checkpoints are 4-bit (for other widths use a GPTQ checkpoint)");
  auto group = q.integer("group_size", std::nullopt);
  if (!group) return group.status();
  if (*group != -1 && (*group <= 0 || hfq::core_group(*group) == 0))
    return error::unsupported(q.where("group_size") + " is " + std::to_string(*group) +
                              "; Switchyard reads groups of a multiple of 32 input features (32, 64, 128, ...) or -1");
  auto version = q.text("version", std::string("gemm"));
  if (!version) return version.status();
  std::string v = *version;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v != "gemm")
    return error::unsupported(q.where("version") + " is " + hf::quoted_text(*version) +
                              "; this plugin reads AutoAWQ's GEMM layout, the one AutoAWQ writes by default "
                              "(requantize with version \"gemm\")");
  auto zp = q.boolean("zero_point", true);
  if (!zp) return zp.status();
  if (!*zp)
    return error::unsupported(q.where("zero_point") + " is false; symmetric AWQ checkpoints without qzeros are "
                              "planned, the awq plugin reads AutoAWQ's default zero-point layout");
  return std::unique_ptr<hf::QuantScheme>(new AwqScheme(*group));
}

}  // namespace sy::awq
