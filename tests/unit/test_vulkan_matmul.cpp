// Vulkan matmul group (get_rows, matmul, matmul_id) for every weight type the CPU backend
// computes, on the portable path and the subgroup path, against the CPU backend's scalar
// kernels: matmul and matmul_id outputs are the scalar dot (backends/cpu/kernels/
// dot_scalar.cpp, dot_grouped_scalar.cpp) of the weight row with the column converted to
// the weight type's dot type (q8_0, q8_K, bf16 or f32) exactly as the CPU converts it;
// get_rows against the SDK's dequantize_row.
//
// Tolerances: matmul and matmul_id within 1e-5 * sum|w_i x_i| per output. Vulkan converts
// the activations to the same bytes and forms the same per-block integer sums and scale
// products, so only the order of the f32 sums differs (the CPU adds blocks in order, the
// shaders per thread and then in a 64-way reduction): a few 2^-24 of sum|w_i x_i| for
// these sizes. The grouped integers (I4_G*, I8_G*) take their zero-point term per block
// where the CPU takes it per group from its pairwise activation sums, and FP8 blocks dot
// the same decoded f32 weights with the f32 activations: again a different order of f32
// sums and products of the same size, so the same bound (observed at most 0.008 of it for
// the grouped types, 0.043 for FP8, 0.016 for F32). Keeping f32 activations instead (the
// CPU's q8 rounding, ~2^-8 per element) misses this by orders of magnitude, so the
// reference tells the two apart.
//
// The subgroup path differs from the portable one only in the one-column (decode) matmul
// shaders, so the default device runs the one-column shapes (for the quantized types
// those are the integer dot product's, with the subgroup reduction, where the device has
// both); the other launches run on the portable device, and the integer dot product's
// multi-column and matmul_id launches are compared with them bit for bit. get_rows
// within 2^-20 of the row's largest value (the decoded weights are the reference's up to a
// fused multiply-add the driver may form).
//
// Weights are random bytes with their f16 scale fields set to small finite values, so
// every bit of every field is exercised, not only the patterns a quantizer writes. Fixed
// seeds. Shapes are small: lavapipe is slow.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dot.hpp"
#include "registry/registry.hpp"
#include "switchyard/quant.hpp"
#include "skip.hpp"

using namespace sy;

namespace {

registry::Registry& reg() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}

constexpr StorageType kTypes[] = {
    StorageType::F32,  StorageType::F16,  StorageType::BF16,   StorageType::Q4_0, StorageType::Q4_1,
    StorageType::Q5_0, StorageType::Q5_1, StorageType::Q8_0,   StorageType::IQ4_NL, StorageType::Q2_K,
    StorageType::Q3_K, StorageType::Q4_K, StorageType::Q5_K, StorageType::Q6_K, StorageType::IQ4_XS,
    StorageType::I4_G32, StorageType::I4_G64, StorageType::I4_G128, StorageType::I8_G32, StorageType::I8_G64,
    StorageType::I8_G128, StorageType::FP8_E4M3_B128, StorageType::FP8_E5M2_B128,
};

bool grouped(StorageType t) { return storage_type_info(t).group_size != 0; }
bool fp8_block(StorageType t) { return t == StorageType::FP8_E4M3_B128 || t == StorageType::FP8_E5M2_B128; }

// Byte offsets of each block's f16 scale fields (the GGUF block layouts; a grouped
// integer type's d; its zero point and FP8's f32 scale are set in random_rows).
std::vector<int> f16_fields(StorageType t) {
  if (fp8_block(t)) return {};
  switch (t) {
    case StorageType::Q4_1:
    case StorageType::Q5_1:
    case StorageType::Q4_K:
    case StorageType::Q5_K: return {0, 2};
    case StorageType::Q2_K: return {80, 82};
    case StorageType::Q3_K: return {108};
    case StorageType::Q6_K: return {208};
    default: return {0};
  }
}

/// `rows` rows of k elements of type t, each row `row_bytes` apart (>= the packed size).
std::vector<std::byte> random_rows(StorageType t, int64_t k, int64_t rows, size_t row_bytes, std::mt19937& g) {
  const auto& info = storage_type_info(t);
  std::vector<std::byte> out(row_bytes * static_cast<size_t>(rows));
  std::uniform_real_distribution<float> val(-1.f, 1.f), scale(0.002f, 0.02f);
  std::uniform_int_distribution<int> byte(0, 255), sign(0, 1);
  for (auto& b : out) b = static_cast<std::byte>(byte(g));
  auto put16 = [](std::byte* p, uint16_t v) { std::memcpy(p, &v, 2); };
  for (int64_t r = 0; r < rows; ++r) {
    std::byte* row = out.data() + static_cast<size_t>(r) * row_bytes;
    if (!info.quantized) {
      for (int64_t i = 0; i < k; ++i) {
        const float v = val(g);
        if (t == StorageType::F32) std::memcpy(row + 4 * i, &v, 4);
        else put16(row + 2 * i, t == StorageType::F16 ? fp32_to_fp16(v) : fp32_to_bf16(v));
      }
      continue;
    }
    for (int64_t b = 0; b < k / info.block_size; ++b) {
      std::byte* block = row + b * info.block_bytes;
      for (int off : f16_fields(t)) {
        const float s = scale(g) * (sign(g) ? 1.f : -1.f);
        put16(block + off, fp32_to_fp16(s));
      }
      if (grouped(t)) {
        // The zero point: a whole number in the codes' range, as AWQ and GPTQ store it.
        const int bits = static_cast<int>(8 * (info.block_bytes - 4) / info.block_size);
        put16(block + 2, fp32_to_fp16(static_cast<float>(std::uniform_int_distribution<int>(0, (1 << bits) - 1)(g))));
      }
      if (fp8_block(t)) {
        const float s = scale(g) * (sign(g) ? 1.f : -1.f);
        std::memcpy(block, &s, 4);
        // No NaN or infinite codes (E4M3 S.1111.111; E5M2 exponent 31): every output
        // would be one. Their decoding is checked by get_rows on its own.
        for (uint32_t j = 4; j < info.block_bytes; ++j) {
          const auto c = static_cast<uint8_t>(block[j]);
          const bool special = t == StorageType::FP8_E4M3_B128 ? (c & 0x7f) == 0x7f : (c & 0x7c) == 0x7c;
          if (special) block[j] = static_cast<std::byte>(c & 0xbf);  // exponent's top bit cleared
        }
      }
    }
  }
  return out;
}

/// The reference's weights: row r decoded by the SDK.
std::vector<float> decode(StorageType t, const std::vector<std::byte>& bytes, int64_t k, int64_t rows,
                          size_t row_bytes) {
  std::vector<float> w(static_cast<size_t>(k * rows));
  bool ok = true;
  for (int64_t r = 0; r < rows; ++r)
    ok = ok && dequantize_row(t, bytes.data() + static_cast<size_t>(r) * row_bytes, w.data() + r * k, k).is_ok();
  REQUIRE(ok);
  return w;
}

size_t packed_row_bytes(StorageType t, int64_t k) { return static_cast<size_t>(*storage_row_bytes(t, static_cast<uint64_t>(k))); }

/// The CPU backend's scalar matmul for one weight type: each activation column converted
/// to the dot type once (column()), then dotted with weight rows (dot()).
struct CpuDot {
  cpu::DotKernel kernel;
  std::vector<std::byte> act;
  explicit CpuDot(StorageType w) : kernel(cpu::dot_kernel_scalar(w)) { REQUIRE(kernel.dot != nullptr); }
  void column(const float* x, int64_t k) {
    act.assign(kernel.act_bytes ? kernel.act_bytes(k) : packed_row_bytes(kernel.act_type, k), std::byte{0});
    kernel.quantize_act(k, x, act.data());
  }
  float dot(const std::byte* w, int64_t k) const { return kernel.dot(k, w, act.data()); }
};

std::vector<std::byte> floats_bytes(const std::vector<float>& v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// A Vulkan backend with or without its fast paths (SWITCHYARD_VULKAN_PATH is read when
/// the device is created). Null when Vulkan is absent here (a failure under CI=true).
registry::Owned<Backend> open_vulkan(bool portable) {
  if (!reg().find(ComponentKind::backend, "vulkan")) {
    sy::test::skip_unless_ci("the Vulkan backend is not built here");
    return {};
  }
  if (portable) setenv("SWITCHYARD_VULKAN_PATH", "portable", 1);
  auto be = reg().create_backend("vulkan", {});
  if (portable) unsetenv("SWITCHYARD_VULKAN_PATH");
  if (!be.has_value()) {
    sy::test::skip_unless_ci("no Vulkan device: " + be.status().message());
    return {};
  }
  return std::move(be.value());
}

bool has_feature(const Device& d, const std::string& f) {
  for (const auto& s : d.info().features)
    if (s == f) return true;
  return false;
}

/// One node's tensors on the device; tensor i is uploaded from host bytes.
struct Graph {
  Device& dev;
  std::vector<GraphTensor> tensors;
  std::vector<std::unique_ptr<Buffer>> buffers;

  int32_t add(StorageType type, std::initializer_list<int64_t> ne, std::initializer_list<int64_t> nb,
              const std::vector<std::byte>& bytes) {
    GraphTensor t;
    t.type = type;
    int d = 0;
    for (int64_t v : ne) t.ne[d++] = v;
    d = 0;
    for (int64_t v : nb) t.nb[d++] = v;
    auto buf = dev.allocate(bytes.size(), BufferKind::device_local);
    REQUIRE(buf.has_value());
    REQUIRE(buf.value()->upload(0, bytes).is_ok());
    t.buffer = buf.value().get();
    buffers.push_back(std::move(buf.value()));
    tensors.push_back(t);
    return static_cast<int32_t>(tensors.size() - 1);
  }
  Status run(const GraphNode& n) {
    SubGraph g{tensors, std::span<const GraphNode>(&n, 1), 0};
    if (auto st = dev.execute(g); !st) return st;
    return dev.synchronize();
  }
  std::vector<float> read(int32_t i) {
    std::vector<float> v(buffers[static_cast<size_t>(i)]->size() / 4);
    REQUIRE(buffers[static_cast<size_t>(i)]->download(0, std::as_writable_bytes(std::span(v))).is_ok());
    return v;
  }
};

// Marks unwritten output: a NaN pattern no kernel result equals.
std::vector<std::byte> sentinel(size_t bytes) { return std::vector<std::byte>(bytes, std::byte{0xff}); }
bool is_sentinel(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u == 0xffffffffu;
}

/// Compares got (at its own offsets) with the exact reference, counting outputs outside
/// the tolerance; reports the worst one.
struct Check {
  int bad = 0;
  std::string worst;
  double worst_ratio = 0;
  void operator()(float got, double ref, double tol, const std::string& where) {
    const double err = std::fabs(static_cast<double>(got) - ref);
    const double ratio = std::isfinite(got) ? err / tol : 1e30;
    if (ratio > 1) ++bad;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = where + ": got " + std::to_string(got) + ", want " + std::to_string(ref) + " (tolerance " +
              std::to_string(tol) + ")";
    }
  }
};

// k for a shape: `blocks` whole blocks of the type, or for plain types `plain` elements.
int64_t k_of(StorageType t, int64_t blocks, int64_t plain) {
  const auto& info = storage_type_info(t);
  return info.quantized ? blocks * info.block_size : plain;
}

struct MatmulShape {
  const char* name;
  bool one_column;          // the shapes that take the subgroup shaders
  int64_t blocks, plain_k;  // k: whole blocks, or plain_k elements for F32/F16/BF16
  int64_t m1, m2;           // X [k, m1, m2]
  bool padded;              // X and dst rows padded (row strides beyond the packed size)
  bool permuted;            // X's dims 1 and 2 stored swapped
};

// A: one activation column and more 32-element units than the workgroup's 64 threads;
// B: one column, one block, padded rows; C: one block, m = 7 (a partial group of 8
// columns), padded rows; D: three blocks, m = 9 as [k, 3, 3] with the two outer dims
// swapped in memory (a second column group).
constexpr MatmulShape kShapes[] = {
    {"m=1, k over 64 units", true, 0, 2263, 1, 1, false, false},
    {"m=1, one block, padded rows", true, 1, 45, 1, 1, true, false},
    {"m=7, one block, padded rows", false, 1, 45, 7, 1, true, false},
    {"m=9, three blocks, permuted X", false, 3, 100, 3, 3, false, true},
};

int64_t shape_k(StorageType type, const MatmulShape& s) {
  const auto& info = storage_type_info(type);
  return s.blocks ? k_of(type, s.blocks, s.plain_k)
                  : (info.quantized ? ((2240 + info.block_size - 1) / info.block_size) * info.block_size : s.plain_k);
}
constexpr int64_t kRows = 67;
int64_t x_row(const MatmulShape& s, int64_t k) { return s.padded ? k + 3 : k; }
int64_t y_row(const MatmulShape& s) { return s.padded ? kRows + 2 : kRows; }

/// Runs shape s's matmul of weights wbytes (kRows rows of k) with x (columns x_row(s, k)
/// apart, in the shape's order) on dev; the output with its padding (y_row(s) a column).
// One column through `rows` packed weight rows of `wrow` bytes: the plain decode shape.
std::vector<float> run_gemv(Device& dev, StorageType type, int64_t k, int64_t rows, size_t wrow,
                            const std::vector<std::byte>& wbytes, const std::vector<float>& x) {
  Graph gr{dev, {}, {}};
  const int64_t wr = static_cast<int64_t>(wrow);
  const int32_t wi = gr.add(type, {k, rows, 1, 1}, {storage_type_info(type).block_bytes, wr, wr * rows, wr * rows}, wbytes);
  const int32_t xi = gr.add(StorageType::F32, {k, 1, 1, 1}, {4, k * 4, k * 4, k * 4}, floats_bytes(x));
  const int32_t yi = gr.add(StorageType::F32, {rows, 1, 1, 1}, {4, rows * 4, rows * 4, rows * 4},
                            sentinel(static_cast<size_t>(rows * 4)));
  GraphNode n;
  n.op = OpKind::matmul;
  n.src[0] = wi;
  n.src[1] = xi;
  n.dst = yi;
  REQUIRE(gr.run(n).is_ok());
  return gr.read(yi);
}

std::vector<float> run_matmul(Device& dev, StorageType type, const MatmulShape& s, int64_t k,
                              const std::vector<std::byte>& wbytes, const std::vector<float>& x) {
  const auto& info = storage_type_info(type);
  const int64_t rows = kRows, m = s.m1 * s.m2;
  const size_t wrow = packed_row_bytes(type, k);
  // X: row (i1, i2) at xrow * (permuted ? i1 * m2 + i2 : i1 + i2 * m1).
  const int64_t xrow = x_row(s, k);
  const int64_t nb1 = s.permuted ? xrow * 4 * s.m2 : xrow * 4, nb2 = s.permuted ? xrow * 4 : xrow * 4 * s.m1;
  const int64_t yrow = y_row(s);

  Graph gr{dev, {}, {}};
  const int32_t wi = gr.add(type, {k, rows, 1, 1},
                            {info.block_bytes, static_cast<int64_t>(wrow),
                             static_cast<int64_t>(wrow) * rows, static_cast<int64_t>(wrow) * rows},
                            wbytes);
  const int32_t xi = gr.add(StorageType::F32, {k, s.m1, s.m2, 1}, {4, nb1, nb2, xrow * 4 * m}, floats_bytes(x));
  const int32_t yi = gr.add(StorageType::F32, {rows, s.m1, s.m2, 1}, {4, yrow * 4, yrow * 4 * s.m1, yrow * 4 * m},
                            sentinel(static_cast<size_t>(yrow * m * 4)));
  GraphNode n;
  n.op = OpKind::matmul;
  n.src[0] = wi;
  n.src[1] = xi;
  n.dst = yi;
  REQUIRE(dev.supports(n, gr.tensors) == Support::yes);
  REQUIRE(gr.run(n).is_ok());
  return gr.read(yi);
}

void matmul_case(Device& dev, StorageType type, const MatmulShape& s, std::mt19937& g) {
  const int64_t k = shape_k(type, s), rows = kRows, m = s.m1 * s.m2;
  const size_t wrow = packed_row_bytes(type, k);
  const auto wbytes = random_rows(type, k, rows, wrow, g);
  const auto w = decode(type, wbytes, k, rows, wrow);
  const int64_t xrow = x_row(s, k), yrow = y_row(s);
  std::vector<float> x(static_cast<size_t>(xrow * m));
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  for (auto& v : x) v = val(g);
  const auto y = run_matmul(dev, type, s, k, wbytes, x);

  Check check;
  CpuDot cpu(type);
  int untouched = 0;
  for (int64_t i2 = 0; i2 < s.m2; ++i2)
    for (int64_t i1 = 0; i1 < s.m1; ++i1) {
      const float* xc = x.data() + (s.permuted ? i1 * s.m2 + i2 : i1 + i2 * s.m1) * xrow;
      const int64_t c = i1 + i2 * s.m1;
      cpu.column(xc, k);
      for (int64_t r = 0; r < rows; ++r) {
        double mag = 0;
        for (int64_t i = 0; i < k; ++i) mag += std::fabs(static_cast<double>(w[static_cast<size_t>(r * k + i)]) * xc[i]);
        const float ref = cpu.dot(wbytes.data() + static_cast<size_t>(r) * wrow, k);
        check(y[static_cast<size_t>(c * yrow + r)], ref, 1e-5 * mag + 1e-30,
              "row " + std::to_string(r) + " column " + std::to_string(c));
      }
      for (int64_t r = rows; r < yrow; ++r) untouched += is_sentinel(y[static_cast<size_t>(c * yrow + r)]) ? 0 : 1;
    }
  INFO("k " << k << ", worst: " << check.worst);
  CHECK(check.bad == 0);
  CHECK(untouched == 0);  // the padding between output rows is never written
}

// matmul_id's shape: W [k, 19, 4 experts], 3 slots, 3 tokens. Token 0 picks expert 2
// twice; token 1 names an expert that does not exist (slot 1), whose row must come out
// zero. Nine pairs: a second group of eight.
constexpr int64_t kIdRows = 19, kExperts = 4, kUsed = 3, kTokens = 3;
const std::vector<int32_t> kIds = {2, 0, 2, 3, 9, 1, 1, 1, 0};
int64_t id_k(StorageType type) { return k_of(type, 2, 70); }

/// Runs matmul_id of weights wbytes (kIdRows * kExperts rows of id_k) with x (one column
/// per token, or per (slot, token) unless x_shared) on dev.
std::vector<float> run_matmul_id(Device& dev, StorageType type, bool x_shared, const std::vector<std::byte>& wbytes,
                                 const std::vector<float>& x) {
  const auto& info = storage_type_info(type);
  const int64_t k = id_k(type), rows = kIdRows, experts = kExperts, used = kUsed, tokens = kTokens;
  const size_t wrow = packed_row_bytes(type, k);
  const int64_t xs = x_shared ? 1 : used;
  const auto& ids = kIds;
  std::vector<std::byte> idb(ids.size() * 4);
  std::memcpy(idb.data(), ids.data(), idb.size());

  Graph gr{dev, {}, {}};
  const int64_t wr = static_cast<int64_t>(wrow);
  const int32_t wi = gr.add(type, {k, rows, experts, 1}, {info.block_bytes, wr, wr * rows, wr * rows * experts}, wbytes);
  const int32_t xi = gr.add(StorageType::F32, {k, xs, tokens, 1}, {4, k * 4, k * 4 * xs, k * 4 * xs * tokens},
                            floats_bytes(x));
  const int32_t ii = gr.add(StorageType::I32, {used, tokens, 1, 1}, {4, used * 4, used * tokens * 4, used * tokens * 4}, idb);
  const int32_t yi = gr.add(StorageType::F32, {rows, used, tokens, 1},
                            {4, rows * 4, rows * used * 4, rows * used * tokens * 4},
                            sentinel(static_cast<size_t>(rows * used * tokens * 4)));
  GraphNode n;
  n.op = OpKind::matmul_id;
  n.src[0] = wi;
  n.src[1] = xi;
  n.src[2] = ii;
  n.dst = yi;
  REQUIRE(dev.supports(n, gr.tensors) == Support::yes);
  REQUIRE(gr.run(n).is_ok());
  return gr.read(yi);
}

void matmul_id_case(Device& dev, StorageType type, bool x_shared, std::mt19937& g) {
  const int64_t k = id_k(type), rows = kIdRows, experts = kExperts, used = kUsed, tokens = kTokens;
  const size_t wrow = packed_row_bytes(type, k);
  const auto wbytes = random_rows(type, k, rows * experts, wrow, g);
  const auto w = decode(type, wbytes, k, rows * experts, wrow);
  const int64_t xs = x_shared ? 1 : used;
  std::vector<float> x(static_cast<size_t>(k * xs * tokens));
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  for (auto& v : x) v = val(g);
  const auto y = run_matmul_id(dev, type, x_shared, wbytes, x);
  const auto& ids = kIds;

  Check check;
  CpuDot cpu(type);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < used; ++j) {
      const int32_t e = ids[static_cast<size_t>(j + t * used)];
      const float* xc = x.data() + ((x_shared ? 0 : j) + t * xs) * k;
      cpu.column(xc, k);
      for (int64_t r = 0; r < rows; ++r) {
        double mag = 0;
        float ref = 0;
        if (e < experts) {
          for (int64_t i = 0; i < k; ++i)
            mag += std::fabs(static_cast<double>(w[static_cast<size_t>((e * rows + r) * k + i)]) * xc[i]);
          ref = cpu.dot(wbytes.data() + static_cast<size_t>(e * rows + r) * wrow, k);
        }
        check(y[static_cast<size_t>((t * used + j) * rows + r)], ref, 1e-5 * mag + 1e-30,
              "token " + std::to_string(t) + " slot " + std::to_string(j) + " row " + std::to_string(r));
      }
    }
  INFO("k " << k << (x_shared ? ", one input per token" : ", one input per slot") << ", worst: " << check.worst);
  CHECK(check.bad == 0);
}

void get_rows_case(Device& dev, StorageType type, std::mt19937& g) {
  const auto& info = storage_type_info(type);
  const int64_t k = k_of(type, 2, 37), n_rows = 5, yrow = k + 1;
  const size_t trow = packed_row_bytes(type, k);
  const auto tbytes = random_rows(type, k, n_rows, trow, g);
  const auto table = decode(type, tbytes, k, n_rows, trow);
  // Row 3 twice, and an id past the table (its output row must be zero).
  const std::vector<int32_t> ids = {3, 0, 3, 4, 5};
  const int64_t m = static_cast<int64_t>(ids.size());
  std::vector<std::byte> idb(ids.size() * 4);
  std::memcpy(idb.data(), ids.data(), idb.size());

  Graph gr{dev, {}, {}};
  const int64_t tr = static_cast<int64_t>(trow);
  const int32_t ti = gr.add(type, {k, n_rows, 1, 1}, {info.block_bytes, tr, tr * n_rows, tr * n_rows}, tbytes);
  const int32_t ii = gr.add(StorageType::I32, {m, 1, 1, 1}, {4, m * 4, m * 4, m * 4}, idb);
  const int32_t yi = gr.add(StorageType::F32, {k, m, 1, 1}, {4, yrow * 4, yrow * 4 * m, yrow * 4 * m},
                            sentinel(static_cast<size_t>(yrow * m * 4)));
  GraphNode n;
  n.op = OpKind::get_rows;
  n.src[0] = ti;
  n.src[1] = ii;
  n.dst = yi;
  REQUIRE(dev.supports(n, gr.tensors) == Support::yes);
  REQUIRE(gr.run(n).is_ok());
  const auto y = gr.read(yi);

  Check check;
  int untouched = 0;
  for (int64_t i = 0; i < m; ++i) {
    const int32_t id = ids[static_cast<size_t>(i)];
    double amax = 0;
    if (id < n_rows)
      for (int64_t j = 0; j < k; ++j) amax = std::max(amax, std::fabs(static_cast<double>(table[static_cast<size_t>(id * k + j)])));
    for (int64_t j = 0; j < k; ++j) {
      const double ref = id < n_rows ? table[static_cast<size_t>(id * k + j)] : 0.0;
      check(y[static_cast<size_t>(i * yrow + j)], ref, std::ldexp(amax, -20) + 1e-30,
            "output row " + std::to_string(i) + " element " + std::to_string(j));
    }
    untouched += is_sentinel(y[static_cast<size_t>(i * yrow + k)]) ? 0 : 1;
  }
  INFO("k " << k << ", worst: " << check.worst);
  CHECK(check.bad == 0);
  CHECK(untouched == 0);
}

}  // namespace

TEST_CASE("vulkan matmul group: every weight type on the portable and the subgroup path", "[vulkan][vulkan-matmul]") {
  for (bool portable : {true, false}) {
    auto be = open_vulkan(portable);
    if (!be) return;
    Device& dev = be->device(0);
    const bool sg = has_feature(dev, "path matmul: subgroup");
    if (portable) {
      CHECK_FALSE(sg);
    } else if (!sg) {
      WARN(dev.info().description + " has no subgroup arithmetic: only the portable path is tested");
      continue;
    }
    std::mt19937 g(1234);
    for (StorageType type : kTypes) {
      INFO((portable ? "portable" : "subgroup") << " path, " << storage_type_name(type));
      for (const auto& s : kShapes) {
        if (!portable && !s.one_column) continue;
        INFO("matmul " << s.name);
        matmul_case(dev, type, s, g);
      }
      if (!portable) continue;
      matmul_id_case(dev, type, false, g);
      matmul_id_case(dev, type, true, g);
      get_rows_case(dev, type, g);
    }
  }
}

namespace {

// Inputs on which every order of the f32 sums gives the same result, so that paths with
// different reductions (and the CPU) must agree bit for bit: weights are random bytes with
// every f16 scale field +-2^-10, activations are multiples of 2^-7 of at most 2 in
// magnitude with a +-127 * 2^-7 at the start of every 32-element block, so the q8
// activation scales are 2^-7 (Q8_K's -+2^-7), every level is exact, and every product and
// partial sum is a multiple of 2^-17 far below 2^24 of them.
std::vector<std::byte> dyadic_rows(StorageType t, int64_t k, int64_t rows, size_t row_bytes, std::mt19937& g) {
  auto out = random_rows(t, k, rows, row_bytes, g);
  const auto& info = storage_type_info(t);
  std::uniform_int_distribution<int> sign(0, 1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < k / info.block_size; ++b)
      for (int off : f16_fields(t)) {
        const uint16_t h = fp32_to_fp16(sign(g) ? 0x1p-10f : -0x1p-10f);
        std::memcpy(out.data() + static_cast<size_t>(r) * row_bytes + b * info.block_bytes + off, &h, 2);
      }
  return out;
}
/// `cols` columns of k activations, `stride` floats apart.
std::vector<float> dyadic_x(int64_t cols, int64_t stride, int64_t k, std::mt19937& g) {
  std::vector<float> x(static_cast<size_t>(cols * stride), 0.f);
  std::uniform_int_distribution<int> level(-256, 256), sign(0, 1);
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t i = 0; i < k; ++i)
      x[static_cast<size_t>(c * stride + i)] =
          i % 32 == 0 ? (sign(g) ? 127.f : -127.f) / 128.f : static_cast<float>(level(g)) / 128.f / 128.f * 2.f;
  return x;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

}  // namespace

// The integer dot product path (packed 4 x 8-bit dots of the weight levels with the q8
// activations) forms the same integer sums as the portable path and the same float
// products, so outputs match exactly: multi-column matmul and matmul_id reduce the same
// way on both paths and must match on any inputs; one-column matmul reduces with
// subgroupAdd where the device has it, so there the inputs are exact under any order
// (dyadic_rows, dyadic_x) and also equal the CPU's scalar dot exactly.
TEST_CASE("vulkan matmul group: the integer dot product path gives the portable path's outputs exactly",
          "[vulkan][vulkan-matmul]") {
  auto portable = open_vulkan(true);
  if (!portable) return;
  auto fast = open_vulkan(false);
  REQUIRE(fast);
  Device &pd = portable->device(0), &fd = fast->device(0);
  CHECK_FALSE(has_feature(pd, "path matmul: integer dot product"));
  CHECK_FALSE(has_feature(pd, "path matmul_id: integer dot product"));
  const bool idot = has_feature(fd, "integer dot product");
  CHECK(has_feature(fd, "path matmul: integer dot product") == idot);
  CHECK(has_feature(fd, "path matmul_id: integer dot product") == idot);
  if (!idot) {
    WARN(fd.info().description + " has no integer dot product: its path is not tested");
    return;
  }
  std::mt19937 g(4321);
  for (StorageType type : kTypes) {
    // FP8 weights are dotted in floats on every path: no integer dot product to compare.
    if (!storage_type_info(type).quantized || fp8_block(type)) continue;
    INFO(storage_type_name(type));
    for (const auto& s : kShapes) {
      INFO("matmul " << s.name);
      const int64_t k = shape_k(type, s), m = s.m1 * s.m2, xrow = x_row(s, k), yrow = y_row(s);
      const size_t wrow = packed_row_bytes(type, k);
      // Random inputs: exact where the reductions are the same.
      if (!s.one_column) {
        const auto wbytes = random_rows(type, k, kRows, wrow, g);
        std::vector<float> x(static_cast<size_t>(xrow * m));
        std::uniform_real_distribution<float> val(-1.f, 1.f);
        for (auto& v : x) v = val(g);
        CHECK(same_bits(run_matmul(pd, type, s, k, wbytes, x), run_matmul(fd, type, s, k, wbytes, x)));
      }
      // Inputs exact under any order: every shape, and the CPU's result.
      const auto wbytes = dyadic_rows(type, k, kRows, wrow, g);
      const auto x = dyadic_x(m, xrow, k, g);
      const auto yp = run_matmul(pd, type, s, k, wbytes, x), yf = run_matmul(fd, type, s, k, wbytes, x);
      CHECK(same_bits(yp, yf));
      CpuDot cpu(type);
      int differ = 0;
      for (int64_t i2 = 0; i2 < s.m2; ++i2)
        for (int64_t i1 = 0; i1 < s.m1; ++i1) {
          cpu.column(x.data() + (s.permuted ? i1 * s.m2 + i2 : i1 + i2 * s.m1) * xrow, k);
          const int64_t c = i1 + i2 * s.m1;
          for (int64_t r = 0; r < kRows; ++r)
            differ += yf[static_cast<size_t>(c * yrow + r)] == cpu.dot(wbytes.data() + static_cast<size_t>(r) * wrow, k) ? 0 : 1;
        }
      CHECK(differ == 0);
    }
    for (bool x_shared : {false, true}) {
      INFO("matmul_id" << (x_shared ? ", one input per token" : ", one input per slot"));
      const int64_t k = id_k(type);
      const auto wbytes = random_rows(type, k, kIdRows * kExperts, packed_row_bytes(type, k), g);
      std::vector<float> x(static_cast<size_t>(k * (x_shared ? 1 : kUsed) * kTokens));
      std::uniform_real_distribution<float> val(-1.f, 1.f);
      for (auto& v : x) v = val(g);
      CHECK(same_bits(run_matmul_id(pd, type, x_shared, wbytes, x), run_matmul_id(fd, type, x_shared, wbytes, x)));
    }
  }
}

// The CPU's activation rounding where it is easy to get wrong: a zero block, halves (x * id
// exactly k + 0.5: act_q8_0 rounds them away from zero, Q8_K's quantize_row to even), a
// block whose largest magnitude is negative (Q8_K's scale takes its sign), values on bf16
// rounding ties, and a NaN (which the CPU's conversions read as 0 and leave out of the
// block's maximum). Everything else is zero, so one level rounded the other way moves an
// output by far more than the tolerance.
TEST_CASE("vulkan matmul group: activations rounded as the CPU rounds them", "[vulkan][vulkan-matmul]") {
  for (bool portable : {true, false}) {
    auto be = open_vulkan(portable);
    if (!be) return;
    Device& dev = be->device(0);
    const int64_t k = 512, rows = 8;
    std::vector<float> x(static_cast<size_t>(k), 0.f);
    // Block 1 (elements 32..63): amax 127, so d = 1 and id = 1 exactly.
    const float halves[] = {127.f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, 126.5f, -3.5f, 4.5f, 7.f, -8.25f};
    for (size_t i = 0; i < std::size(halves); ++i) x[32 + i] = halves[i];
    // Super-block 1 (elements 256..511): largest magnitude -127 first, +127 after it.
    const float neg[] = {-127.f, 2.5f, 3.5f, -4.5f, 0.5f, 127.f, -1.5f};
    for (size_t i = 0; i < std::size(neg); ++i) x[300 + i] = neg[i];
    // bf16 ties: 1 + 2^-8 (to 1) and 1 + 3 * 2^-8 (to 1 + 2^-6).
    x[70] = 1.f + std::ldexp(1.f, -8);
    x[71] = 1.f + 3 * std::ldexp(1.f, -8);
    // Block 3 holds a NaN among ordinary values; super-block 0 therefore does too.
    x[96] = 0.75f;
    x[97] = std::nanf("");
    x[98] = -0.3f;
    for (StorageType type : {StorageType::Q8_0, StorageType::Q4_1, StorageType::Q4_K, StorageType::Q6_K,
                             StorageType::BF16}) {
      INFO((portable ? "portable" : "default") << " path, " << storage_type_name(type));
      // bf16 keeps a NaN (every output would be NaN): that block is left without one.
      std::vector<float> xt = x;
      if (type == StorageType::BF16) xt[97] = 0.f;
      std::mt19937 g(99);
      const size_t wrow = packed_row_bytes(type, k);
      const auto wbytes = random_rows(type, k, rows, wrow, g);
      const auto w = decode(type, wbytes, k, rows, wrow);
      const auto y = run_gemv(dev, type, k, rows, wrow, wbytes, xt);
      CpuDot cpu(type);
      cpu.column(xt.data(), k);
      Check check;
      for (int64_t r = 0; r < rows; ++r) {
        double mag = 0;
        for (int64_t i = 0; i < k; ++i)
          if (!std::isnan(xt[static_cast<size_t>(i)]))
            mag += std::fabs(static_cast<double>(w[static_cast<size_t>(r * k + i)]) * xt[static_cast<size_t>(i)]);
        const float ref = cpu.dot(wbytes.data() + static_cast<size_t>(r) * wrow, k);
        REQUIRE(std::isfinite(ref));
        check(y[static_cast<size_t>(r)], ref, 1e-5 * mag + 1e-30, "row " + std::to_string(r));
      }
      INFO("worst: " << check.worst);
      CHECK(check.bad == 0);
    }
  }
}

// Every FP8 code, the NaN and infinite ones included, decoded by get_rows: the SDK's value
// bit for bit (a NaN for a NaN), under a scale of 1 (the codes' own values, subnormals
// too) and under 2^-3 * 1.1 (one f32 rounding per product).
TEST_CASE("vulkan matmul group: get_rows decodes every FP8 code as the SDK does", "[vulkan][vulkan-matmul]") {
  auto be = open_vulkan(true);
  if (!be) return;
  Device& dev = be->device(0);
  for (StorageType type : {StorageType::FP8_E4M3_B128, StorageType::FP8_E5M2_B128}) {
    INFO(storage_type_name(type));
    const int64_t k = 256;
    const size_t trow = packed_row_bytes(type, k);
    std::vector<std::byte> tbytes(2 * trow);
    for (int r = 0; r < 2; ++r) {
      const float scale = r == 0 ? 1.f : 0.125f * 1.1f;
      for (int b = 0; b < 2; ++b) {
        std::byte* block = tbytes.data() + r * trow + b * 132;
        std::memcpy(block, &scale, 4);
        for (int j = 0; j < 128; ++j) block[4 + j] = static_cast<std::byte>(128 * b + j);
      }
    }
    const auto table = decode(type, tbytes, k, 2, trow);
    const std::vector<int32_t> ids = {0, 1};
    std::vector<std::byte> idb(8);
    std::memcpy(idb.data(), ids.data(), 8);
    Graph gr{dev, {}, {}};
    const auto tr = static_cast<int64_t>(trow);
    const int32_t ti = gr.add(type, {k, 2, 1, 1}, {132, tr, 2 * tr, 2 * tr}, tbytes);
    const int32_t ii = gr.add(StorageType::I32, {2, 1, 1, 1}, {4, 8, 8, 8}, idb);
    const int32_t yi = gr.add(StorageType::F32, {k, 2, 1, 1}, {4, 4 * k, 8 * k, 8 * k}, sentinel(static_cast<size_t>(8 * k)));
    GraphNode n;
    n.op = OpKind::get_rows;
    n.src[0] = ti;
    n.src[1] = ii;
    n.dst = yi;
    REQUIRE(gr.run(n).is_ok());
    const auto y = gr.read(yi);
    int wrong = 0, nans = 0;
    std::string first;
    for (size_t i = 0; i < table.size(); ++i) {
      const bool same = std::isnan(table[i]) ? std::isnan(y[i]) : std::memcmp(&table[i], &y[i], 4) == 0;
      nans += std::isnan(table[i]) ? 1 : 0;
      if (!same && wrong++ == 0)
        first = "element " + std::to_string(i) + ": got " + std::to_string(y[i]) + ", want " + std::to_string(table[i]);
    }
    INFO(first);
    CHECK(wrong == 0);
    CHECK(nans == (type == StorageType::FP8_E4M3_B128 ? 4 : 12));  // the NaN codes were there
  }
}

TEST_CASE("vulkan matmul group: nodes the shaders do not handle are refused", "[vulkan][vulkan-matmul]") {
  auto be = open_vulkan(false);
  if (!be) return;
  Device& dev = be->device(0);
  // Memory unassigned: supports() sees types, shapes and strides only.
  auto tensor = [](StorageType type, int64_t ne0, int64_t ne1, int64_t ne2 = 1) {
    GraphTensor t;
    t.type = type;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    t.ne[2] = ne2;
    const auto& info = storage_type_info(type);
    t.nb[0] = info.block_bytes;
    t.nb[1] = static_cast<int64_t>(packed_row_bytes(type, ne0));
    t.nb[2] = t.nb[1] * ne1;
    t.nb[3] = t.nb[2] * ne2;
    return t;
  };
  auto matmul = [&](GraphTensor w, GraphTensor x, GraphTensor y) {
    const GraphTensor ts[] = {w, x, y};
    GraphNode n;
    n.op = OpKind::matmul;
    n.src[0] = 0;
    n.src[1] = 1;
    n.dst = 2;
    return dev.supports(n, ts);
  };
  const auto x = tensor(StorageType::F32, 64, 3), y = tensor(StorageType::F32, 8, 3);
  CHECK(matmul(tensor(StorageType::Q4_K, 256, 8), tensor(StorageType::F32, 256, 3), y) == Support::yes);
  CHECK(matmul(tensor(StorageType::Q4_0, 64, 8), x, y) == Support::yes);
  // Types no shader decodes.
  CHECK(matmul(tensor(StorageType::Q8_1, 64, 8), x, y) == Support::no);
  CHECK(matmul(tensor(StorageType::IQ2_XXS, 256, 8), tensor(StorageType::F32, 256, 3), y) == Support::no);
  // Activations must be f32; outputs f32.
  CHECK(matmul(tensor(StorageType::Q4_0, 64, 8), tensor(StorageType::F16, 64, 3), y) == Support::no);
  CHECK(matmul(tensor(StorageType::Q4_0, 64, 8), x, tensor(StorageType::F16, 8, 3)) == Support::no);
  // Weight elements strided within a row; a row that is not whole blocks.
  auto strided = tensor(StorageType::F16, 64, 8);
  strided.nb[0] = 4;
  strided.nb[1] = 256;
  CHECK(matmul(strided, x, y) == Support::no);
  CHECK(matmul(tensor(StorageType::Q4_0, 48, 8), tensor(StorageType::F32, 48, 3), y) == Support::no);
  // A batch of weight matrices is not a matmul weight; shapes must agree.
  CHECK(matmul(tensor(StorageType::Q4_0, 64, 8, 2), x, y) == Support::no);
  CHECK(matmul(tensor(StorageType::Q4_0, 64, 9), x, y) == Support::no);
  CHECK(matmul(tensor(StorageType::Q4_0, 64, 8), x, tensor(StorageType::F32, 8, 4)) == Support::no);
  // A stride past 31 bits.
  auto far = x;
  far.nb[1] = int64_t{1} << 32;
  CHECK(matmul(tensor(StorageType::Q4_0, 64, 8), far, y) == Support::no);

  // get_rows wants i32 ids, one output row per id.
  auto get_rows = [&](GraphTensor table, GraphTensor ids, GraphTensor out) {
    const GraphTensor ts[] = {table, ids, out};
    GraphNode n;
    n.op = OpKind::get_rows;
    n.src[0] = 0;
    n.src[1] = 1;
    n.dst = 2;
    return dev.supports(n, ts);
  };
  const auto table = tensor(StorageType::Q6_K, 256, 10);
  CHECK(get_rows(table, tensor(StorageType::I32, 4, 1), tensor(StorageType::F32, 256, 4)) == Support::yes);
  CHECK(get_rows(table, tensor(StorageType::F32, 4, 1), tensor(StorageType::F32, 256, 4)) == Support::no);
  CHECK(get_rows(table, tensor(StorageType::I32, 4, 1), tensor(StorageType::F32, 256, 5)) == Support::no);
}

TEST_CASE("vulkan matmul group: more output rows than one grid dimension holds", "[vulkan][vulkan-matmul]") {
  auto be = open_vulkan(true);
  if (!be) return;
  Device& dev = be->device(0);
  // 65540 rows fold over two grid dimensions (65535 is the least limit Vulkan guarantees).
  const int64_t rows = 65540, k = 32;
  std::mt19937 g(77);
  const size_t wrow = packed_row_bytes(StorageType::Q4_0, k);
  const auto wbytes = random_rows(StorageType::Q4_0, k, rows, wrow, g);
  const auto w = decode(StorageType::Q4_0, wbytes, k, rows, wrow);
  std::vector<float> x(static_cast<size_t>(k));
  std::uniform_real_distribution<float> val(-1.f, 1.f);
  for (auto& v : x) v = val(g);

  const auto y = run_gemv(dev, StorageType::Q4_0, k, rows, wrow, wbytes, x);
  Check check;
  CpuDot cpu(StorageType::Q4_0);
  cpu.column(x.data(), k);
  for (int64_t r = 0; r < rows; ++r) {
    double mag = 0;
    for (int64_t i = 0; i < k; ++i) mag += std::fabs(static_cast<double>(w[static_cast<size_t>(r * k + i)]) * x[static_cast<size_t>(i)]);
    check(y[static_cast<size_t>(r)], cpu.dot(wbytes.data() + static_cast<size_t>(r) * wrow, k), 1e-5 * mag + 1e-30, "row " + std::to_string(r));
  }
  INFO("worst: " << check.worst);
  CHECK(check.bad == 0);

  // get_rows with as many ids: one output row each.
  const std::vector<float> table = {0.5f, -1.f, 2.f, 4.f};  // [1, 4]
  std::vector<int32_t> ids(static_cast<size_t>(rows));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7) % 4);
  std::vector<std::byte> idb(ids.size() * 4);
  std::memcpy(idb.data(), ids.data(), idb.size());
  Graph gr{dev, {}, {}};
  const int32_t ti = gr.add(StorageType::F32, {1, 4, 1, 1}, {4, 4, 16, 16}, floats_bytes(table));
  const int32_t ii = gr.add(StorageType::I32, {rows, 1, 1, 1}, {4, rows * 4, rows * 4, rows * 4}, idb);
  const int32_t oi = gr.add(StorageType::F32, {1, rows, 1, 1}, {4, 4, rows * 4, rows * 4}, sentinel(static_cast<size_t>(rows * 4)));
  GraphNode gn;
  gn.op = OpKind::get_rows;
  gn.src[0] = ti;
  gn.src[1] = ii;
  gn.dst = oi;
  REQUIRE(gr.run(gn).is_ok());
  const auto out = gr.read(oi);
  int wrong = 0;
  for (size_t i = 0; i < ids.size(); ++i) wrong += out[i] == table[static_cast<size_t>(ids[i])] ? 0 : 1;
  CHECK(wrong == 0);
}
