// The awq, gptq and fp8 readers on checkpoints this test packs itself, bit by bit from the
// layouts of shared/formats/SPEC.md: the neighbours of the shared fixtures (GPTQ 2, 3 and 8
// bits, v1 and v2, groups of 32 and -1, act-order; AWQ groups of 64; FP8 per tensor, per
// channel and per block with BF16 scales; llama's q rows reordered after decoding), each
// decoded tensor against W = (q - z) * s computed from the values packed; then every
// malformed checkpoint each reader must refuse, by a sentence naming the tensor.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "awq_scheme.hpp"
#include "fp8_scheme.hpp"
#include "gptq_scheme.hpp"
#include "hf_model.hpp"
#include "safetensors_bytes.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using sy::test::StEntry;

namespace {

constexpr int64_t kHidden = 128, kFfn = 256, kVocab = 16, kHeadDim = 64;

json config(const json& q) {
  json c = {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", kHidden}, {"num_hidden_layers", 1},
            {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"intermediate_size", kFfn},
            {"vocab_size", kVocab}, {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0},
            {"max_position_embeddings", 128}, {"torch_dtype", "float16"}};
  if (!q.is_null()) c["quantization_config"] = q;
  return c;
}

StEntry bf16(const std::string& name, std::vector<int64_t> shape) {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  return {name, "BF16", shape, sy::test::bf16_values(n, [](size_t i) { return 0.5f + static_cast<float>(i % 5); })};
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// The unquantized rest of a one-layer llama.
std::vector<StEntry> plain_tensors(bool with_q, bool with_down) {
  const std::string L = "model.layers.0.";
  std::vector<StEntry> ts{bf16("model.embed_tokens.weight", {kVocab, kHidden}), bf16("model.norm.weight", {kHidden}),
                          bf16("lm_head.weight", {kVocab, kHidden}), bf16(L + "input_layernorm.weight", {kHidden}),
                          bf16(L + "post_attention_layernorm.weight", {kHidden}),
                          bf16(L + "self_attn.k_proj.weight", {kHeadDim, kHidden}),
                          bf16(L + "self_attn.v_proj.weight", {kHeadDim, kHidden}),
                          bf16(L + "self_attn.o_proj.weight", {kHidden, kHidden}),
                          bf16(L + "mlp.gate_proj.weight", {kFfn, kHidden}), bf16(L + "mlp.up_proj.weight", {kFfn, kHidden})};
  if (with_q) ts.push_back(bf16(L + "self_attn.q_proj.weight", {kHidden, kHidden}));
  if (with_down) ts.push_back(bf16(L + "mlp.down_proj.weight", {kHidden, kFfn}));
  return ts;
}

// The integer linear a test packs: codes q[n][k], effective zeros z[g][n], f16 scales s[g][n],
// group of each input column.
struct IntRef {
  int64_t out = 0, in = 0, groups = 0;
  int bits = 4;
  std::vector<int> q, z, g_idx;
  std::vector<uint16_t> s;
  [[nodiscard]] float w(int64_t n, int64_t k) const {
    const int g = g_idx[static_cast<size_t>(k)];
    return (static_cast<float>(q[static_cast<size_t>(n * in + k)]) - static_cast<float>(z[static_cast<size_t>(g * out + n)])) *
           sy::fp16_to_fp32(s[static_cast<size_t>(g * out + n)]);
  }
};

// v1: GPTQ v1 stores zero - 1, so its zeros run 1 .. 2^bits; otherwise 0 .. 2^bits - 1.
IntRef int_ref(int64_t out, int64_t in, int bits, int64_t group, bool sym, bool act_order, bool v1) {
  IntRef r;
  r.out = out, r.in = in, r.bits = bits;
  const int64_t gs = group < 0 ? in : group;
  r.groups = in / gs;
  const int levels = 1 << bits;
  for (int64_t n = 0; n < out; ++n)
    for (int64_t k = 0; k < in; ++k) r.q.push_back(static_cast<int>((n * 7 + k * 3 + k / 5) % levels));
  for (int64_t g = 0; g < r.groups; ++g)
    for (int64_t n = 0; n < out; ++n) {
      r.z.push_back(sym ? levels / 2 : static_cast<int>((g * 3 + n * 5) % levels) + (v1 ? 1 : 0));
      r.s.push_back(sy::fp32_to_fp16(0.0078125f * static_cast<float>(1 + (g * 5 + n) % 7)));
    }
  for (int64_t k = 0; k < in; ++k)
    // act-order: a column's group follows a shuffled order (every group still holds gs columns).
    r.g_idx.push_back(static_cast<int>(act_order ? ((k * 37) % in) / gs : k / gs));
  return r;
}

// Sets value v at stream position i (bits [i*b, (i+1)*b)) of column `col` of a word matrix
// with `cols` columns, one bit at a time.
void put_stream(std::vector<uint32_t>& words, int64_t cols, int64_t col, int64_t i, int b, uint32_t v) {
  for (int bit = 0; bit < b; ++bit) {
    const int64_t pos = i * b + bit;
    words[static_cast<size_t>((pos / 32) * cols + col)] |= ((v >> bit) & 1u) << (pos % 32);
  }
}

std::vector<StEntry> gptq_tensors(const std::string& m, const IntRef& r, bool v2, bool with_g_idx = true) {
  const int b = r.bits;
  std::vector<uint32_t> qw(static_cast<size_t>(r.in * b / 32 * r.out)), qz(static_cast<size_t>(r.groups * r.out * b / 32));
  for (int64_t n = 0; n < r.out; ++n)
    for (int64_t k = 0; k < r.in; ++k) put_stream(qw, r.out, n, k, b, static_cast<uint32_t>(r.q[static_cast<size_t>(n * r.in + k)]));
  for (int64_t g = 0; g < r.groups; ++g)
    for (int64_t n = 0; n < r.out; ++n) {
      const int z = r.z[static_cast<size_t>(g * r.out + n)];
      // v1 stores zero - 1 (sym checkpoints too); v2 the zero.
      const auto stored = static_cast<uint32_t>((v2 ? z : z - 1) & ((1 << b) - 1));
      std::vector<uint32_t> row(static_cast<size_t>(r.out * b / 32));
      put_stream(row, 1, 0, n, b, stored);
      for (size_t w = 0; w < row.size(); ++w) qz[static_cast<size_t>(g) * row.size() + w] |= row[w];
    }
  std::vector<StEntry> ts{{m + ".qweight", "I32", {r.in * b / 32, r.out}, bytes_of(qw)},
                          {m + ".qzeros", "I32", {r.groups, r.out * b / 32}, bytes_of(qz)},
                          {m + ".scales", "F16", {r.groups, r.out}, bytes_of(r.s)}};
  if (with_g_idx) {
    std::vector<int32_t> gi(r.g_idx.begin(), r.g_idx.end());
    ts.push_back({m + ".g_idx", "I32", {r.in}, bytes_of(gi)});
  }
  return ts;
}

std::vector<StEntry> awq_tensors(const std::string& m, const IntRef& r) {
  static constexpr int kOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};  // nibble i holds column 8c + kOrder[i]
  std::vector<uint32_t> qw(static_cast<size_t>(r.in * r.out / 8)), qz(static_cast<size_t>(r.groups * r.out / 8));
  for (int64_t k = 0; k < r.in; ++k)
    for (int64_t c = 0; c < r.out / 8; ++c)
      for (int i = 0; i < 8; ++i)
        qw[static_cast<size_t>(k * (r.out / 8) + c)] |=
            static_cast<uint32_t>(r.q[static_cast<size_t>((8 * c + kOrder[i]) * r.in + k)]) << (4 * i);
  for (int64_t g = 0; g < r.groups; ++g)
    for (int64_t c = 0; c < r.out / 8; ++c)
      for (int i = 0; i < 8; ++i)
        qz[static_cast<size_t>(g * (r.out / 8) + c)] |= static_cast<uint32_t>(r.z[static_cast<size_t>(g * r.out + 8 * c + kOrder[i])])
                                                        << (4 * i);
  return {{m + ".qweight", "I32", {r.in, r.out / 8}, bytes_of(qw)},
          {m + ".qzeros", "I32", {r.groups, r.out / 8}, bytes_of(qz)},
          {m + ".scales", "F16", {r.groups, r.out}, bytes_of(r.s)}};
}

void write_folder(const fs::path& dir, const json& cfg, const std::vector<StEntry>& ts) {
  sy::test::write_file(dir / "config.json", cfg.dump());
  sy::test::write_bytes(dir / "model.safetensors", sy::test::safetensors_bytes(ts, {{"format", "pt"}}));
}

sy::hf::QuantReader reader(const std::string& method) {
  if (method == "awq") return {"awq", sy::awq::make_scheme};
  if (method == "gptq") return {"gptq", sy::gptq::make_scheme};
  return {"fp8", sy::fp8::make_scheme};
}

std::unique_ptr<sy::hf::Model> open_ok(const fs::path& dir, const std::string& method) {
  const auto r = reader(method);
  auto m = sy::hf::Model::open(dir, &r);
  INFO((m ? std::string() : m.status().message()));
  REQUIRE(m.has_value());
  return std::move(*m);
}

std::string open_error(const fs::path& dir, const std::string& method) {
  const auto r = reader(method);
  auto m = sy::hf::Model::open(dir, &r);
  REQUIRE_FALSE(m.has_value());
  return m.status().message();
}

// A decoded tensor as f32 [rows][cols] in input-feature order (its input_order undone).
std::vector<float> decoded(const sy::hf::Model& m, const std::string& name, int64_t rows, int64_t cols) {
  const auto ts = m.tensors();
  std::vector<float> stored(static_cast<size_t>(rows * cols));
  std::vector<int32_t> order;
  bool found = false;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].name == name + ".weight") {
      REQUIRE(ts[i].shape == std::vector<int64_t>{cols, rows});
      std::vector<std::byte> raw(ts[i].bytes);
      REQUIRE(m.read(i, 0, raw).is_ok());
      REQUIRE(sy::dequantize_row(ts[i].type, raw.data(), stored.data(), rows * cols).is_ok());
      found = true;
    }
    if (ts[i].name == name + ".input_order") {
      order.resize(static_cast<size_t>(cols));
      REQUIRE(m.read(i, 0, std::as_writable_bytes(std::span(order))).is_ok());
    }
  }
  REQUIRE(found);
  if (order.empty()) return stored;
  std::vector<float> w(stored.size());
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t p = 0; p < cols; ++p)
      w[static_cast<size_t>(n * cols + order[static_cast<size_t>(p)])] = stored[static_cast<size_t>(n * cols + p)];
  return w;
}

int64_t mismatches(const std::vector<float>& got, const IntRef& r) {
  int64_t bad = 0;
  for (int64_t n = 0; n < r.out; ++n)
    for (int64_t k = 0; k < r.in; ++k) bad += got[static_cast<size_t>(n * r.in + k)] != r.w(n, k);
  return bad;
}

const std::string kDown = "model.layers.0.mlp.down_proj";
const std::string kQ = "model.layers.0.self_attn.q_proj";

}  // namespace

TEST_CASE("gptq: 2, 3, 4 and 8 bits, v1 and v2, groups 32, 128 and -1, act-order, decode exactly", "[hfquant]") {
  struct Case {
    int bits;
    int64_t group;
    bool v2, sym, act_order;
  };
  for (const Case c : {Case{2, 32, false, false, false}, Case{3, 128, false, false, false}, Case{3, -1, true, false, false},
                       Case{4, 128, false, true, false}, Case{4, 32, true, false, true}, Case{8, 128, false, true, false},
                       Case{8, -1, true, false, false}, Case{4, 64, false, false, true}}) {
    DYNAMIC_SECTION(c.bits << " bits, group " << c.group << (c.v2 ? ", v2" : ", v1") << (c.sym ? ", sym" : ", asym")
                            << (c.act_order ? ", act-order" : "")) {
      const IntRef r = int_ref(kHidden, kFfn, c.bits, c.group, c.sym, c.act_order, !c.v2);
      auto ts = plain_tensors(true, false);
      for (auto& t : gptq_tensors(kDown, r, c.v2)) ts.push_back(std::move(t));
      sy::test::TempDir dir;
      write_folder(dir.path(), config({{"quant_method", "gptq"}, {"bits", c.bits}, {"group_size", c.group},
                                        {"desc_act", c.act_order}, {"sym", c.sym},
                                        {"checkpoint_format", c.v2 ? "gptq_v2" : "gptq"}}),
                   ts);
      const auto m = open_ok(dir.path(), "gptq");
      CHECK(mismatches(decoded(*m, "blk.0.ffn_down", kHidden, kFfn), r) == 0);
    }
  }
}

TEST_CASE("gptq: v1 zero points stored as zero - 1 reach 2^bits, as the format defines", "[hfquant]") {
  IntRef r = int_ref(kHidden, kFfn, 4, 128, false, false, true);
  for (auto& z : r.z) z = 16;  // stored 15
  auto ts = plain_tensors(true, false);
  for (auto& t : gptq_tensors(kDown, r, false)) ts.push_back(std::move(t));
  sy::test::TempDir dir;
  write_folder(dir.path(), config({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"sym", false}}), ts);
  CHECK(mismatches(decoded(*open_ok(dir.path(), "gptq"), "blk.0.ffn_down", kHidden, kFfn), r) == 0);
}

TEST_CASE("awq: groups of 64 in the GEMM nibble order; llama's q rows reordered after decoding", "[hfquant]") {
  const IntRef down = int_ref(kHidden, kFfn, 4, 64, false, false, false);
  const IntRef q = int_ref(kHidden, kHidden, 4, 64, false, false, false);
  auto ts = plain_tensors(false, false);
  for (auto& t : awq_tensors(kDown, down)) ts.push_back(std::move(t));
  for (auto& t : awq_tensors(kQ, q)) ts.push_back(std::move(t));
  sy::test::TempDir dir;
  write_folder(dir.path(), config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 64}, {"version", "gemm"}, {"zero_point", true}}), ts);
  const auto m = open_ok(dir.path(), "awq");
  CHECK(mismatches(decoded(*m, "blk.0.ffn_down", kHidden, kFfn), down) == 0);
  // Row h*hd + 2i + j of llama.cpp's q is checkpoint row h*hd + j*hd/2 + i (convert_hf_to_gguf).
  const auto got = decoded(*m, "blk.0.attn_q", kHidden, kHidden);
  int64_t bad = 0;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < kHeadDim / 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t k = 0; k < kHidden; ++k)
          bad += got[static_cast<size_t>((h * kHeadDim + 2 * i + j) * kHidden + k)] != q.w(h * kHeadDim + j * kHeadDim / 2 + i, k);
  CHECK(bad == 0);
}

TEST_CASE("fp8: per tensor, per channel and 128x128 blocks, F32 or BF16 scales, decode exactly", "[hfquant]") {
  // E4M3 codes avoiding the NaN codes 0x7F/0xFF; scales exact in BF16.
  const auto code = [](int64_t n, int64_t k) { return static_cast<uint8_t>((n * 13 + k * 7) % 0x7F | (((n + k) & 1) << 7)); };
  struct Case {
    const char* name;
    json q;
    std::vector<int64_t> scale_shape;
    const char* scale_name;
    const char* scale_dtype;
  };
  const json ct_channel = {{"quant_method", "compressed-tensors"}, {"format", "float-quantized"},
                           {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", {{"type", "float"}, {"num_bits", 8}, {"strategy", "channel"}}}}}}}};
  for (const Case& c : {Case{"per tensor", {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}}, {}, "weight_scale", "F32"},
                        Case{"128x128 blocks", {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}}, {1, 2}, "weight_scale_inv", "F32"},
                        Case{"per channel", ct_channel, {kHidden, 1}, "weight_scale", "BF16"}}) {
    DYNAMIC_SECTION(c.name) {
      size_t n_scales = 1;
      for (auto d : c.scale_shape) n_scales *= static_cast<size_t>(d);
      std::vector<float> scales(n_scales);
      for (size_t i = 0; i < n_scales; ++i) scales[i] = 0.0625f * static_cast<float>(1 + i % 9);
      std::vector<uint8_t> w(static_cast<size_t>(kHidden * kFfn));
      for (int64_t n = 0; n < kHidden; ++n)
        for (int64_t k = 0; k < kFfn; ++k) w[static_cast<size_t>(n * kFfn + k)] = code(n, k);
      auto ts = plain_tensors(true, false);
      ts.push_back({kDown + ".weight", "F8_E4M3", {kHidden, kFfn}, w});
      ts.push_back(std::string(c.scale_dtype) == "F32"
                       ? StEntry{kDown + "." + c.scale_name, "F32", c.scale_shape, bytes_of(scales)}
                       : StEntry{kDown + "." + c.scale_name, "BF16", c.scale_shape,
                                 sy::test::bf16_values(n_scales, [&](size_t i) { return scales[i]; })});
      sy::test::TempDir dir;
      write_folder(dir.path(), config(c.q), ts);
      const auto got = decoded(*open_ok(dir.path(), "fp8"), "blk.0.ffn_down", kHidden, kFfn);
      int64_t bad = 0;
      for (int64_t n = 0; n < kHidden; ++n)
        for (int64_t k = 0; k < kFfn; ++k) {
          const size_t si = n_scales == 1 ? 0 : c.scale_shape[1] == 1 ? static_cast<size_t>(n) : static_cast<size_t>((n / 128) * 2 + k / 128);
          // float8_e4m3fn from its definition: bias 7, subnormals below exponent 1.
          const uint8_t cv = code(n, k);
          const int e = (cv >> 3) & 15, mant = cv & 7;
          const float mag = e == 0 ? std::ldexp(static_cast<float>(mant) / 8.0f, -6) : std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, e - 7);
          bad += got[static_cast<size_t>(n * kFfn + k)] != ((cv & 0x80) ? -mag : mag) * scales[si];
        }
      CHECK(bad == 0);
    }
  }
}

namespace {

json gptq_config() { return {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"sym", false}, {"desc_act", false}}; }

// A GPTQ folder with `edit` applied to the down_proj tensors before writing.
template <class Edit>
std::string gptq_error(Edit edit, json cfg = gptq_config(), const std::string& method = "gptq") {
  const IntRef r = int_ref(kHidden, kFfn, 4, 128, false, false, true);
  auto q = gptq_tensors(kDown, r, false);
  edit(q);
  auto ts = plain_tensors(true, false);
  for (auto& t : q) ts.push_back(std::move(t));
  sy::test::TempDir dir;
  write_folder(dir.path(), config(cfg), ts);
  return open_error(dir.path(), method);
}

bool has(const std::string& msg, const std::string& part) { return msg.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("quantized readers refuse malformed checkpoints with a sentence naming the tensor and the fix", "[hfquant]") {
  SECTION("a missing qzeros") {
    const auto msg = gptq_error([](auto& q) { q.erase(q.begin() + 1); });
    CHECK(has(msg, kDown + ".qzeros"));
    CHECK(has(msg, "download"));
  }
  SECTION("scales of the wrong shape") {
    const auto msg = gptq_error([](auto& q) { q[2].shape = {1, kHidden / 2}; q[2].data.resize(kHidden); });
    CHECK(has(msg, kDown + ".scales"));
    CHECK(has(msg, "[1, 64]"));
    CHECK(has(msg, "[2, 128]"));
  }
  SECTION("qweight of a wrong type") {
    const auto msg = gptq_error([](auto& q) { q[0].dtype = "F32"; });
    CHECK(has(msg, kDown + ".qweight"));
    CHECK(has(msg, "I32"));
  }
  SECTION("a g_idx outside the groups") {
    const auto msg = gptq_error([](auto& q) {
      const int32_t bad = 7;
      std::memcpy(q[3].data.data() + 4 * 10, &bad, 4);
    });
    CHECK(has(msg, kDown + ".g_idx"));
    CHECK(has(msg, "input column 10 group 7"));
  }
  SECTION("act-order groups of the wrong size") {
    const auto msg = gptq_error([](auto& q) {
      const int32_t one = 1;
      std::memcpy(q[3].data.data(), &one, 4);  // column 0 moves to group 1: 129 columns there
    });
    CHECK(has(msg, kDown + ".g_idx"));
    CHECK(has(msg, "group_size 128"));
  }
  SECTION("an unsupported width") {
    json cfg = gptq_config();
    cfg["bits"] = 5;
    const auto msg = gptq_error([](auto&) {}, cfg);
    CHECK(has(msg, "quantization_config.bits is 5"));
  }
  SECTION("an unknown quant_method") {
    json cfg = gptq_config();
    cfg["quant_method"] = "bitsandbytes";
    CHECK(has(gptq_error([](auto&) {}, cfg), "bitsandbytes checkpoint"));
    sy::test::TempDir dir;
    write_folder(dir.path(), config(cfg), plain_tensors(true, true));
    auto m = sy::hf::Model::open(dir.path());
    REQUIRE_FALSE(m.has_value());
    CHECK(has(m.status().message(), "bitsandbytes"));
    CHECK(has(m.status().message(), "quant_method"));
  }
  SECTION("a checkpoint of another method") {
    CHECK(has(gptq_error([](auto&) {}, gptq_config(), "awq"), "the gptq format plugin reads"));
  }
  SECTION("AWQ's GEMV layout") {
    json cfg = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"version", "gemv"}};
    CHECK(has(gptq_error([](auto&) {}, cfg, "awq"), "quantization_config.version"));
  }
  SECTION("an FP8 weight without its scale") {
    auto ts = plain_tensors(true, false);
    ts.push_back({kDown + ".weight", "F8_E4M3", {kHidden, kFfn}, std::vector<unsigned char>(static_cast<size_t>(kHidden * kFfn), 0x38)});
    sy::test::TempDir dir;
    write_folder(dir.path(), config({{"quant_method", "fp8"}}), ts);
    const auto msg = open_error(dir.path(), "fp8");
    CHECK(has(msg, kDown + ".weight_scale"));
    CHECK(has(msg, "download"));
  }
  SECTION("FP8 fused expert tensors (transformers v5), which the fp8 plugin does not decode") {
    auto ts = plain_tensors(true, false);
    ts.push_back({"model.layers.0.mlp.experts.gate_up_proj", "F8_E4M3", {2, 2 * kFfn, kHidden},
                  std::vector<unsigned char>(static_cast<size_t>(4 * kFfn * kHidden), 0x38)});
    sy::test::TempDir dir;
    write_folder(dir.path(), config({{"quant_method", "fp8"}}), ts);
    const auto msg = open_error(dir.path(), "fp8");
    CHECK(has(msg, "mlp.experts.gate_up_proj"));
    CHECK(has(msg, "fused expert tensors"));
  }
  SECTION("a truncated shard") {
    const IntRef r = int_ref(kHidden, kFfn, 4, 128, false, false, true);
    auto ts = plain_tensors(true, false);
    for (auto& t : gptq_tensors(kDown, r, false)) ts.push_back(std::move(t));
    sy::test::TempDir dir;
    write_folder(dir.path(), config(gptq_config()), ts);
    fs::resize_file(dir.path() / "model.safetensors", fs::file_size(dir.path() / "model.safetensors") - 100);
    const auto msg = open_error(dir.path(), "gptq");
    CHECK(has(msg, "model.safetensors"));
  }
}
