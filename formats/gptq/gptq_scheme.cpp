#include "gptq_scheme.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "bitstream.hpp"
#include "companion.hpp"
#include "int_groups.hpp"
#include "parallel.hpp"
#include "names_text.hpp"

namespace sy::gptq {
namespace {

using hfq::Dtype;
using hfq::ends_with;

class GptqScheme final : public hf::QuantScheme {
 public:
  explicit GptqScheme(Settings s) : s_(s) {}

  std::string module_of(const hf::StTensor& t) const override {
    return ends_with(t.name, ".qweight") ? t.name.substr(0, t.name.size() - 8) : std::string();
  }
  bool companion(const hf::StTensor& t) const override {
    return ends_with(t.name, ".qzeros") || ends_with(t.name, ".scales") || ends_with(t.name, ".g_idx");
  }
  Result<hf::DecodedLinear> decode(const hf::TensorFinder& f, const std::string& module) const override;

 private:
  Settings s_;
};

// The order in which input columns are stored so that every group is contiguous: identity
// unless act-order shuffled g_idx. Errors when the groups are not of the configured size.
// `where` names the g_idx tensor in errors.
Result<std::vector<int32_t>> column_order(const std::vector<int32_t>& g_idx, int64_t group, const std::string& where) {
  const auto in = static_cast<int64_t>(g_idx.size());
  bool plain = true;
  for (int64_t k = 0; k < in && plain; ++k) plain = g_idx[static_cast<size_t>(k)] == k / group;
  if (plain) return std::vector<int32_t>();
  std::vector<int32_t> order(static_cast<size_t>(in));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return g_idx[static_cast<size_t>(a)] < g_idx[static_cast<size_t>(b)]; });
  for (int64_t p = 0; p < in; ++p)
    if (g_idx[static_cast<size_t>(order[static_cast<size_t>(p)])] != p / group)
      return error::corrupt(where + " puts a number of input columns other than group_size " + std::to_string(group) + " in group " +
                            std::to_string(p / group) + "; GPTQ groups hold group_size columns each, so the "
                            "checkpoint is damaged (download it again)");
  return order;
}

Result<hf::DecodedLinear> GptqScheme::decode(const hf::TensorFinder& f, const std::string& module) const {
  const int bits = s_.bits;
  auto qw = hfq::need(f, module, "qweight", "gptq");
  if (!qw) return qw.status();
  if (auto st = hfq::expect_dtype(*qw, {Dtype::I32}); !st) return st;
  const auto& shape = qw->tensor->shape;
  if (shape.size() != 2 || shape[0] <= 0 || shape[1] <= 0 || (shape[0] * 32) % bits != 0)
    return error::corrupt(qw->file + ": tensor " + hf::quoted_text(qw->tensor->name) + " has shape " +
                          hfq::shape_text(shape) + "; GPTQ stores qweight as [input features x bits / 32, output features]");
  const int64_t in = shape[0] * 32 / bits, out = shape[1];
  const int64_t group = s_.group < 0 ? in : s_.group;
  const int64_t groups = (in + group - 1) / group;
  const std::string why = "its qweight " + hfq::shape_text(shape) + " (" + std::to_string(in) + " inputs at " +
                          std::to_string(bits) + " bits) and group_size " + std::to_string(s_.group);
  if ((out * bits) % 32 != 0)
    return error::unsupported("the quantized linear " + hf::quoted_text(module) + " has " + std::to_string(out) +
                              " outputs, which do not fill whole int32 words of " + std::to_string(bits) +
                              "-bit zero points; the checkpoint is damaged");
  auto qz = hfq::need(f, module, "qzeros", "gptq");
  if (!qz) return qz.status();
  if (auto st = hfq::expect_dtype(*qz, {Dtype::I32}); !st) return st;
  if (auto st = hfq::expect_shape(*qz, {groups, out * bits / 32}, why); !st) return st;
  auto sc = hfq::need(f, module, "scales", "gptq");
  if (!sc) return sc.status();
  if (auto st = hfq::expect_dtype(*sc, {Dtype::F16}); !st) return st;
  if (auto st = hfq::expect_shape(*sc, {groups, out}, why); !st) return st;

  std::vector<int32_t> g_idx(static_cast<size_t>(in));
  const auto gi = hfq::maybe(f, module, "g_idx");
  if (gi.tensor) {
    if (auto st = hfq::expect_dtype(gi, {Dtype::I32}); !st) return st;
    if (auto st = hfq::expect_shape(gi, {in}, why); !st) return st;
    for (int64_t k = 0; k < in; ++k) {
      const int32_t g = hfq::i32_at(gi, static_cast<uint64_t>(k));
      if (g < 0 || g >= groups)
        return error::corrupt(gi.file + ": tensor " + hf::quoted_text(gi.tensor->name) + " gives input column " +
                              std::to_string(k) + " group " + std::to_string(g) + ", outside the " +
                              std::to_string(groups) + " groups of its scales; the checkpoint is damaged (download it again)");
      g_idx[static_cast<size_t>(k)] = g;
    }
  } else {
    for (int64_t k = 0; k < in; ++k) g_idx[static_cast<size_t>(k)] = static_cast<int32_t>(k / group);
  }
  auto order = column_order(g_idx, group, gi.tensor ? gi.file + ": tensor " + hf::quoted_text(gi.tensor->name) : std::string());
  if (!order) return order.status();

  hfq::IntLinear q;
  q.bits = bits;
  q.rows = out;
  q.cols = in;
  q.group = group;
  q.codes.resize(static_cast<size_t>(out * in));
  q.zeros.resize(static_cast<size_t>(out * groups));
  q.scales.resize(static_cast<size_t>(out * groups));
  // Each block of 32 inputs is `bits` words of a column, and sixteen adjacent columns share
  // a cache line: a chunk of sixteen columns walks the rows block by block into buffers,
  // then writes each column out (reordered for act-order).
  hfq::parallel_for((out + 15) / 16, [&](int64_t c0, int64_t c1) {
    std::vector<uint8_t> columns(static_cast<size_t>(16 * in));
    uint32_t block[8];
    for (int64_t cb = c0; cb < c1; ++cb) {
      const int64_t n0 = cb * 16, nn = std::min<int64_t>(16, out - n0);
      for (int64_t b = 0; b < in / 32; ++b)
        for (int64_t c = 0; c < nn; ++c) {
          for (int w = 0; w < bits; ++w)
            block[w] = static_cast<uint32_t>(
                hfq::i32_at(*qw, static_cast<uint64_t>(b * bits + w) * static_cast<uint64_t>(out) + static_cast<uint64_t>(n0 + c)));
          uint8_t* col = columns.data() + c * in + b * 32;
          for (int j = 0; j < 32; ++j)
            col[j] = static_cast<uint8_t>(stream_value([&](uint64_t w) { return block[w]; }, static_cast<uint64_t>(j), bits));
        }
      for (int64_t c = 0; c < nn; ++c) {
        const uint8_t* col = columns.data() + c * in;
        uint8_t* codes = q.codes.data() + (n0 + c) * in;
        if (order->empty())
          std::memcpy(codes, col, static_cast<size_t>(in));
        else
          for (int64_t p = 0; p < in; ++p) codes[p] = col[(*order)[static_cast<size_t>(p)]];
      }
    }
  });
  const uint32_t sym_zero = 1u << (bits - 1);
  const uint64_t zwords = static_cast<uint64_t>(out * bits / 32);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t n = 0; n < out; ++n) {
      const auto word = [&](uint64_t w) { return hfq::i32_at(*qz, static_cast<uint64_t>(g) * zwords + w); };
      const uint32_t stored = stream_value(word, static_cast<uint64_t>(n), bits);
      const uint32_t z = s_.sym ? sym_zero : s_.v2 ? stored : stored + 1;
      q.zeros[static_cast<size_t>(n * groups + g)] = static_cast<uint16_t>(z);
      uint16_t h;
      std::memcpy(&h, sc->data.data() + static_cast<uint64_t>(g * out + n) * 2, 2);
      q.scales[static_cast<size_t>(n * groups + g)] = h;
    }
  auto d = hfq::to_int_groups(q, module);
  if (!d) return d.status();
  d->input_order = std::move(*order);
  return d;
}

}  // namespace

Result<std::unique_ptr<hf::QuantScheme>> make_scheme(const nlohmann::json& qcfg, const std::string& config_file) {
  if (!qcfg.is_object())
    return error::invalid_argument(config_file + ": quantization_config is not an object; GPTQ writes "
                                   "{\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": 128, ...}");
  const hfq::QConfig q(qcfg, config_file);
  Settings s;
  auto bits = q.integer("bits", std::nullopt);
  if (!bits) return bits.status();
  if (*bits != 2 && *bits != 3 && *bits != 4 && *bits != 8)
    return error::unsupported(q.where("bits") + " is " + std::to_string(*bits) + "; GPTQ checkpoints have 2, 3, 4 or 8 bits");
  s.bits = static_cast<int>(*bits);
  auto group = q.integer("group_size", std::nullopt);
  if (!group) return group.status();
  if (*group != -1 && (*group <= 0 || hfq::core_group(*group) == 0))
    return error::unsupported(q.where("group_size") + " is " + std::to_string(*group) +
                              "; Switchyard reads groups of a multiple of 32 input features (32, 64, 128, ...) or -1");
  s.group = *group;
  auto sym = q.boolean("sym", true);
  if (!sym) return sym.status();
  s.sym = *sym;
  auto format = q.text("checkpoint_format", std::string("gptq"));
  if (!format) return format.status();
  if (*format != "gptq" && *format != "gptq_v2")
    return error::unsupported(q.where("checkpoint_format") + " is " + hf::quoted_text(*format) +
                              "; the gptq plugin reads \"gptq\" (v1) and \"gptq_v2\" checkpoints (a Marlin or "
                              "other kernel-specific layout must be saved in one of those)");
  s.v2 = *format == "gptq_v2";
  if (auto marlin = q.boolean("is_marlin_format", false); !marlin || *marlin)
    return marlin ? error::unsupported(q.where("is_marlin_format") + " is true; the gptq plugin reads the plain "
                                       "GPTQ layout, save the checkpoint without Marlin repacking")
                  : marlin.status();
  return std::unique_ptr<hf::QuantScheme>(new GptqScheme(s));
}

}  // namespace sy::gptq
