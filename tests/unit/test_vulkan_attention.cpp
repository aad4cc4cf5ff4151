// The Vulkan cache and recurrent kernels (set_rows, paged attention, conv1d, delta_net)
// against the CPU backend's executor on its scalar kernels: each case lays every tensor
// out in one arena, runs the same nodes on a copy of it on each side, and compares the
// results (caches byte for byte, outputs within a stated tolerance). Skipped with a
// warning where no Vulkan device exists (CI has lavapipe, so there it runs).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "executor.hpp"
#include "registry/registry.hpp"
#include "switchyard/quant.hpp"
#include "skip.hpp"

using namespace sy;

namespace {

registry::Registry& reg() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}

// A Vulkan backend, made once per path: the default (fast paths where the device has
// them) or with SWITCHYARD_VULKAN_PATH=portable. nullptr (with a warning) without one.
Device* vulkan(bool portable) {
  static registry::Owned<Backend> be[2];
  static bool tried[2] = {false, false};
  const int i = portable ? 1 : 0;
  if (!tried[i]) {
    tried[i] = true;
    if (!reg().find(ComponentKind::backend, "vulkan")) return nullptr;
    if (portable) ::setenv("SWITCHYARD_VULKAN_PATH", "portable", 1);
    auto b = reg().create_backend("vulkan", {});
    if (portable) ::unsetenv("SWITCHYARD_VULKAN_PATH");
    if (b && b.value()->device_count() > 0) be[i] = std::move(b.value());
  }
  return be[i] ? &be[i]->device(0) : nullptr;
}

bool has_path(Device& d, const std::string& path) {
  const auto f = d.info().features;
  return std::any_of(f.begin(), f.end(), [&](const std::string& s) { return s.find(path) != std::string::npos; });
}

// Every tensor of a case in one byte arena at 256-byte-aligned offsets; views share it.
struct Arena {
  std::vector<std::byte> bytes;
  std::vector<GraphTensor> tensors;
  std::vector<GraphNode> nodes;

  int add(StorageType type, int64_t n0, int64_t n1 = 1, int64_t n2 = 1, int64_t n3 = 1) {
    const auto& info = storage_type_info(type);
    GraphTensor t;
    t.type = type;
    t.ne[0] = n0, t.ne[1] = n1, t.ne[2] = n2, t.ne[3] = n3;
    t.nb[0] = info.block_bytes;
    t.nb[1] = static_cast<int64_t>(*storage_row_bytes(type, static_cast<uint64_t>(n0)));
    t.nb[2] = t.nb[1] * n1;
    t.nb[3] = t.nb[2] * n2;
    t.offset = (bytes.size() + 255) / 256 * 256;
    bytes.resize(t.offset + static_cast<size_t>(t.nb[3] * n3));
    tensors.push_back(t);
    return static_cast<int>(tensors.size()) - 1;
  }
  // An F32 tensor [n0, n1, n2] whose dimension-1 rows are `pad` floats apart (pad >= n0).
  int padded(int64_t n0, int64_t n1, int64_t n2, int64_t pad) {
    const int id = add(StorageType::F32, pad * n1 * n2);
    GraphTensor& t = tensors[static_cast<size_t>(id)];
    t.ne[0] = n0, t.ne[1] = n1, t.ne[2] = n2;
    t.nb[1] = pad * 4, t.nb[2] = pad * n1 * 4, t.nb[3] = pad * n1 * n2 * 4;
    return id;
  }
  int view(int of, StorageType type, std::initializer_list<int64_t> ne, std::initializer_list<int64_t> nb,
           size_t offset) {
    GraphTensor t;
    t.type = type;
    std::copy(ne.begin(), ne.end(), t.ne);
    std::copy(nb.begin(), nb.end(), t.nb);
    t.offset = tensors[static_cast<size_t>(of)].offset + offset;
    tensors.push_back(t);
    return static_cast<int>(tensors.size()) - 1;
  }
  std::byte* at(int id) { return bytes.data() + tensors[static_cast<size_t>(id)].offset; }
  float* f32(int id) { return reinterpret_cast<float*>(at(id)); }
  int32_t* i32(int id) { return reinterpret_cast<int32_t*>(at(id)); }
  size_t size(int id) const {
    const GraphTensor& t = tensors[static_cast<size_t>(id)];
    return static_cast<size_t>(t.nb[3] * t.ne[3]);
  }
  void node(OpKind op, int dst, std::initializer_list<int> src, std::initializer_list<int32_t> i = {},
            std::initializer_list<float> f = {}) {
    GraphNode n;
    n.op = op;
    n.dst = dst;
    std::copy(src.begin(), src.end(), n.src);
    std::copy(i.begin(), i.end(), n.i);
    std::copy(f.begin(), f.end(), n.f);
    nodes.push_back(n);
  }
};

// The arena after the CPU executor (scalar kernels) ran the nodes.
std::vector<std::byte> run_cpu(const Arena& a) {
  std::vector<std::byte> mem = a.bytes;
  std::vector<GraphTensor> t = a.tensors;
  for (auto& x : t) x.data = mem.data() + x.offset;
  cpu::ThreadPool pool(1);
  cpu::Executor ex(cpu::Isa::scalar, pool);
  const auto st = ex.run(SubGraph{t, a.nodes, 0});
  INFO(st.message());
  REQUIRE(st.is_ok());
  return mem;
}

// The arena after the Vulkan device ran the nodes (each of which it must accept).
std::vector<std::byte> run_vulkan(Device& dev, const Arena& a) {
  auto buf = dev.allocate(a.bytes.size(), BufferKind::device_local);
  REQUIRE(buf.has_value());
  REQUIRE(buf.value()->upload(0, a.bytes).is_ok());
  std::vector<GraphTensor> t = a.tensors;
  for (auto& x : t) x.buffer = buf.value().get();
  for (const auto& n : a.nodes) {
    INFO(op_name(n.op));
    REQUIRE(dev.supports(n, t) == Support::yes);
  }
  const auto st = dev.execute(SubGraph{t, a.nodes, 0});
  INFO(st.message());
  REQUIRE(st.is_ok());
  REQUIRE(dev.synchronize().is_ok());
  std::vector<std::byte> mem(a.bytes.size());
  REQUIRE(buf.value()->download(0, mem).is_ok());
  return mem;
}

void fill_normal(float* p, size_t n, unsigned seed, float sd = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, sd);
  for (size_t i = 0; i < n; ++i) p[i] = nd(rng);
}

void fill_bytes(std::byte* p, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(rng() & 0x7f);  // no f16/bf16 NaN patterns
}

// A cache of `cells` rows holding valid values of its type (quantized from normals).
void fill_cache(Arena& a, int id, unsigned seed) {
  const GraphTensor& t = a.tensors[static_cast<size_t>(id)];
  const int64_t row = t.ne[0], rows = t.ne[1] * t.ne[2];
  std::vector<float> v(static_cast<size_t>(row));
  for (int64_t r = 0; r < rows; ++r) {
    fill_normal(v.data(), v.size(), seed + static_cast<unsigned>(r));
    REQUIRE(quantize_row(t.type, v.data(), a.at(id) + r * t.nb[1], row).is_ok());
  }
}

std::span<const float> floats_of(const std::vector<std::byte>& mem, const Arena& a, int id, size_t n) {
  return {reinterpret_cast<const float*>(mem.data() + a.tensors[static_cast<size_t>(id)].offset), n};
}

// Largest |got - want| / (atol + rtol |want|); <= 1 passes.
double worst(std::span<const float> got, std::span<const float> want, double atol, double rtol) {
  double w = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = std::fabs(static_cast<double>(got[i]) - want[i]) / (atol + rtol * std::fabs(want[i]));
    w = std::isnan(e) ? INFINITY : std::max(w, e);
  }
  return w;
}

std::string type_name(StorageType t) { return std::string(storage_type_name(t)); }

}  // namespace

TEST_CASE("vulkan set_rows: float caches get the CPU's bytes", "[vulkan][kernels]") {
  Device* dev = vulkan(false);
  if (!dev) {
    sy::test::skip_unless_ci("no Vulkan device here");
    return;
  }
  for (StorageType type : {StorageType::F32, StorageType::F16, StorageType::BF16}) {
    INFO(type_name(type));
    Arena a;
    const int64_t hd = 80, kvh = 3, cells = 13, m = 7;
    const int rows = a.padded(hd * kvh, m, 1, hd * kvh + 5);  // rows 5 floats apart beyond their length
    const int slots = a.add(StorageType::I32, m);
    const int cache = a.add(type, hd, kvh, cells);
    fill_normal(a.f32(rows), a.size(rows) / 4, 11);
    a.f32(rows)[3] = 1.0f + 0x1p-11f;  // a tie for f16 rounding
    a.f32(rows)[4] = 1.0f + 0x1p-8f + 0x1p-9f;  // a tie for bf16 rounding
    fill_bytes(a.at(cache), a.size(cache), 12);
    const int32_t s[] = {4, 0, 12, 7, 5, 9, 1};
    std::copy(std::begin(s), std::end(s), a.i32(slots));
    a.node(OpKind::set_rows, cache, {rows, slots});
    const auto want = run_cpu(a), got = run_vulkan(*dev, a);
    const auto& c = a.tensors[static_cast<size_t>(cache)];
    CHECK(std::memcmp(got.data() + c.offset, want.data() + c.offset, a.size(cache)) == 0);
  }
}

TEST_CASE("vulkan set_rows: Q8_0 and Q4_0 blocks equal quantize_row bit for bit", "[vulkan][kernels]") {
  Device* dev = vulkan(false);
  if (!dev) {
    sy::test::skip_unless_ci("no Vulkan device here");
    return;
  }
  for (StorageType type : {StorageType::Q8_0, StorageType::Q4_0}) {
    INFO(type_name(type));
    Arena a;
    const int64_t hd = 64, kvh = 3, cells = 11, m = 9, k = hd * kvh;
    const int rows = a.add(StorageType::F32, k, m);
    const int slots = a.add(StorageType::I32, m);
    const int cache = a.add(type, hd, kvh, cells);
    float* x = a.f32(rows);
    // Rows of different scales; then blocks that stress the scale search.
    for (int64_t r = 0; r < m; ++r)
      fill_normal(x + r * k, static_cast<size_t>(k), 20 + static_cast<unsigned>(r), r == 1 ? 1e-3f : r == 2 ? 60.f : 1.f);
    for (int64_t i = 0; i < 32; ++i) x[3 * k + i] = 0.f;                                   // all zero
    for (int64_t i = 0; i < 32; ++i) x[3 * k + 32 + i] = static_cast<float>(i % 17 - 8) * 0.25f;  // exact levels
    x[4 * k + 5] = 40.f;                                                                    // an outlier
    for (int64_t i = 0; i < 32; ++i) x[5 * k + i] = 0.5f;                                   // constant
    for (int64_t i = 0; i < 32; ++i) x[5 * k + 32 + i] = i == 7 ? -3.f : 0.01f * static_cast<float>(i);
    fill_bytes(a.at(cache), a.size(cache), 21);
    const int32_t s[] = {10, 2, 0, 3, 8, 4, 6, 1, 9};
    std::copy(std::begin(s), std::end(s), a.i32(slots));
    a.node(OpKind::set_rows, cache, {rows, slots});
    const auto want = run_cpu(a), got = run_vulkan(*dev, a);
    const auto& c = a.tensors[static_cast<size_t>(cache)];
    const size_t block = storage_type_info(type).block_bytes;
    size_t differing = 0;
    for (size_t b = 0; b < a.size(cache) / block; ++b)
      differing += std::memcmp(got.data() + c.offset + b * block, want.data() + c.offset + b * block, block) != 0;
    CHECK(differing == 0);
  }
}

namespace {

struct AttnShape {
  StorageType kt, vt;
  int64_t hd, heads, kv_heads;
};

// Two sequences in one paged cache: sequence 0 (table row 1) has 37 positions and queries
// its last 5; sequence 1 (table row 0) has 9 and queries 3 (positions 6..8). Blocks of 8
// cells, handed out out of order; the last block of each sequence is partly filled.
struct Paged {
  static constexpr int64_t block = 8, blocks = 6, cells = 12 * block, tokens = 8;
  static constexpr int32_t table[2][blocks] = {{7, 2, 0, 0, 0, 0}, {3, 10, 1, 5, 9, 0}};
  static constexpr int32_t pos[tokens] = {32, 33, 34, 35, 36, 6, 7, 8};
  static constexpr int32_t seq[tokens] = {1, 1, 1, 1, 1, 0, 0, 0};
};

// The attention node of a paged case; kc and vc already made. Returns the output's id.
int attention_case(Arena& a, int q, int kc, int vc, int64_t dv, int64_t heads, float scale) {
  const int pos = a.add(StorageType::I32, Paged::tokens);
  const int seq = a.add(StorageType::I32, Paged::tokens);
  const int tables = a.add(StorageType::I32, Paged::blocks, 2);
  std::copy(std::begin(Paged::pos), std::end(Paged::pos), a.i32(pos));
  std::copy(std::begin(Paged::seq), std::end(Paged::seq), a.i32(seq));
  std::memcpy(a.i32(tables), Paged::table, sizeof(Paged::table));
  const int out = a.add(StorageType::F32, dv, heads, Paged::tokens);
  fill_normal(a.f32(out), a.size(out) / 4, 99);  // overwritten everywhere
  a.node(OpKind::attention, out, {q, kc, vc, pos, seq, tables}, {static_cast<int32_t>(Paged::block)}, {scale});
  return out;
}

void check_attention(Device& dev, const AttnShape& s, unsigned seed) {
  INFO("K " << type_name(s.kt) << ", V " << type_name(s.vt) << ", head size " << s.hd << ", " << s.heads
            << " heads over " << s.kv_heads << " KV heads");
  Arena a;
  // q as the gated models leave it: a view with each head's row followed by its gate.
  const int qg = a.add(StorageType::F32, 2 * s.hd * s.heads * Paged::tokens);
  const int q = a.view(qg, StorageType::F32, {s.hd, s.heads, Paged::tokens, 1},
                       {4, 2 * s.hd * 4, 2 * s.hd * s.heads * 4, 2 * s.hd * s.heads * Paged::tokens * 4}, 0);
  fill_normal(a.f32(qg), a.size(qg) / 4, seed);
  const int kc = a.add(s.kt, s.hd, s.kv_heads, Paged::cells);
  const int vc = a.add(s.vt, s.hd, s.kv_heads, Paged::cells);
  fill_cache(a, kc, seed + 1000);
  fill_cache(a, vc, seed + 5000);
  const int out = attention_case(a, q, kc, vc, s.hd, s.heads, 1.0f / std::sqrt(static_cast<float>(s.hd)));
  const auto want = run_cpu(a), got = run_vulkan(dev, a);
  const size_t n = static_cast<size_t>(s.hd * s.heads * Paged::tokens);
  // Same scores (the quantized keys dot in integers on both sides), same tiles and order;
  // the exponentials and the float sums' rounding differ (on lavapipe by under a tenth of
  // this tolerance).
  CHECK(worst(floats_of(got, a, out, n), floats_of(want, a, out, n), 2e-6, 2e-5) <= 1.0);
}

}  // namespace

TEST_CASE("vulkan attention: paged cache, GQA, every KV type, against the CPU", "[vulkan][kernels]") {
  for (bool portable : {false, true}) {
    Device* dev = vulkan(portable);
    if (!dev) {
      sy::test::skip_unless_ci("no Vulkan device here");
      return;
    }
    INFO((portable ? "portable path" : "default path"));
    unsigned seed = 300;
    for (StorageType t : {StorageType::F32, StorageType::F16, StorageType::BF16, StorageType::Q8_0, StorageType::Q4_0}) {
      const bool quant = t == StorageType::Q8_0 || t == StorageType::Q4_0;
      for (int64_t hd : {int64_t{64}, quant ? int64_t{96} : int64_t{80}}) {
        check_attention(*dev, {t, t, hd, 4, 4}, seed++);
        check_attention(*dev, {t, t, hd, 8, 2}, seed++);
      }
    }
    check_attention(*dev, {StorageType::Q8_0, StorageType::F16, 64, 4, 1}, seed++);
    check_attention(*dev, {StorageType::Q4_0, StorageType::BF16, 64, 8, 2}, seed++);
    check_attention(*dev, {StorageType::F16, StorageType::Q8_0, 64, 4, 4}, seed++);
  }
}

TEST_CASE("vulkan attention: the integer dot product is the path for quantized keys where the device has it",
          "[vulkan][kernels]") {
  Device* dev = vulkan(false);
  Device* portable = vulkan(true);
  if (!dev || !portable) {
    sy::test::skip_unless_ci("no Vulkan device here");
    return;
  }
  CHECK_FALSE(has_path(*portable, "attention: integer dot product"));
  const auto f = dev->info().features;
  const bool idot = std::any_of(f.begin(), f.end(), [](const std::string& s) {
    return s.find("integer dot product") != std::string::npos || s.find("integer_dot_product") != std::string::npos;
  });
  if (idot) CHECK(has_path(*dev, "attention: integer dot product"));
}

TEST_CASE("vulkan attention: MLA's shape, V a view of the K cache, against the CPU", "[vulkan][kernels]") {
  Device* dev = vulkan(false);
  if (!dev) {
    sy::test::skip_unless_ci("no Vulkan device here");
    return;
  }
  // deepseek2 caches [latent | rotary key] per token: K is [96, 1, cells]; V, the latent
  // part, is its first 64 elements. The CPU reads caches as packed rows, so its reference
  // gets V copied out into a cache of its own; the device reads the view.
  for (StorageType t : {StorageType::F16, StorageType::Q8_0}) {
    INFO(type_name(t));
    const int64_t dk = 96, dv = 64, heads = 4;
    Arena a;
    const int q = a.add(StorageType::F32, dk, heads, Paged::tokens);
    fill_normal(a.f32(q), a.size(q) / 4, 41);
    const int kc = a.add(t, dk, 1, Paged::cells);
    fill_cache(a, kc, 42);
    const GraphTensor k = a.tensors[static_cast<size_t>(kc)];  // a copy: adding tensors below moves the vector
    const int vview = a.view(kc, t, {dv, 1, Paged::cells, 1}, {k.nb[0], k.nb[1], k.nb[2], k.nb[3]}, 0);
    const int vcopy = a.add(t, dv, 1, Paged::cells);
    const size_t vrow = *storage_row_bytes(t, dv);
    for (int64_t c = 0; c < Paged::cells; ++c)
      std::memcpy(a.at(vcopy) + c * static_cast<int64_t>(vrow), a.at(kc) + c * k.nb[2], vrow);
    Arena on_cpu = a, on_dev = a;
    const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
    const int out_cpu = attention_case(on_cpu, q, kc, vcopy, dv, heads, scale);
    const int out_dev = attention_case(on_dev, q, kc, vview, dv, heads, scale);
    const auto want = run_cpu(on_cpu), got = run_vulkan(*dev, on_dev);
    const size_t n = static_cast<size_t>(dv * heads * Paged::tokens);
    CHECK(worst(floats_of(got, on_dev, out_dev, n), floats_of(want, on_cpu, out_cpu, n), 2e-6, 2e-5) <= 1.0);
  }
}

TEST_CASE("vulkan attention: set_rows then attention in one graph; one visible key gives its V row", "[vulkan][kernels]") {
  Device* dev = vulkan(false);
  if (!dev) {
    sy::test::skip_unless_ci("no Vulkan device here");
    return;
  }
  // The decode step as the model builds it: write this token's K and V rows, then attend
  // over them; the executor must order the writes before the reads.
  const int64_t hd = 64, heads = 4, kvh = 2, cells = 4 * 8, n = 3;
  for (StorageType t : {StorageType::F16, StorageType::Q4_0}) {
    INFO(type_name(t));
    Arena a;
    const int q = a.add(StorageType::F32, hd, heads, n);
    const int k = a.add(StorageType::F32, hd * kvh, n);
    const int v = a.add(StorageType::F32, hd * kvh, n);
    const int slots = a.add(StorageType::I32, n);
    const int kc = a.add(t, hd, kvh, cells);
    const int vc = a.add(t, hd, kvh, cells);
    const int pos = a.add(StorageType::I32, n);
    const int seq = a.add(StorageType::I32, n);
    const int tables = a.add(StorageType::I32, 4, 2);
    const int out = a.add(StorageType::F32, hd, heads, n);
    fill_normal(a.f32(q), a.size(q) / 4, 51);
    fill_normal(a.f32(k), a.size(k) / 4, 52);
    fill_normal(a.f32(v), a.size(v) / 4, 53);
    fill_cache(a, kc, 54);
    fill_cache(a, vc, 55);
    // Token 0: sequence 0 at position 10 (cell 2*8+2); tokens 1, 2: sequence 1 at 0 and 1.
    const int32_t table[2][4] = {{3, 2, 0, 0}, {1, 0, 0, 0}};
    const int32_t p[n] = {10, 0, 1}, sq[n] = {0, 1, 1}, sl[n] = {18, 8, 9};
    std::memcpy(a.i32(tables), table, sizeof(table));
    std::copy(p, p + n, a.i32(pos));
    std::copy(sq, sq + n, a.i32(seq));
    std::copy(sl, sl + n, a.i32(slots));
    a.node(OpKind::set_rows, kc, {k, slots});
    a.node(OpKind::set_rows, vc, {v, slots});
    a.node(OpKind::attention, out, {q, kc, vc, pos, seq, tables}, {8}, {0.125f});
    const auto want = run_cpu(a), got = run_vulkan(*dev, a);
    const size_t nout = static_cast<size_t>(hd * heads * n);
    CHECK(worst(floats_of(got, a, out, nout), floats_of(want, a, out, nout), 2e-6, 2e-5) <= 1.0);
    // Token 1 sees exactly one key, so its output is that key's V row (as stored).
    const auto& vt = a.tensors[static_cast<size_t>(vc)];
    std::vector<float> row(static_cast<size_t>(hd));
    REQUIRE(dequantize_row(t, got.data() + vt.offset + 8 * vt.nb[2], row.data(), hd).is_ok());
    const float* o1 = floats_of(got, a, out, nout).data() + hd * heads;
    for (int64_t i = 0; i < hd; ++i) CHECK(o1[i] == Approx(row[static_cast<size_t>(i)]).margin(1e-6));
  }
}

TEST_CASE("vulkan conv1d: causal taps over state slots, runs of tokens, chunked equals whole", "[vulkan][kernels]") {
  Device* dev = vulkan(false);
  if (!dev) {
    sy::test::skip_unless_ci("no Vulkan device here");
    return;
  }
  for (int64_t taps : {int64_t{4}, int64_t{2}, int64_t{8}}) {
    INFO(taps << " taps");
    const int64_t ch = 70, slots = 3;
    // Step 1: a 6-token prefill of slot 2 and a 2-token one of slot 0 (shorter than the
    // window); step 2: one decode token each for slots 0 and 2. Both steps in one graph.
    Arena a;
    const int x1 = a.padded(ch, 8, 1, ch + 3);
    const int x2 = a.add(StorageType::F32, ch, 2);
    const int w = a.add(StorageType::F32, taps, ch);
    const int state = a.add(StorageType::F32, (taps - 1) * ch, slots);
    const int s1 = a.add(StorageType::I32, 8), s2 = a.add(StorageType::I32, 2);
    const int y1 = a.add(StorageType::F32, ch, 8), y2 = a.add(StorageType::F32, ch, 2);
    fill_normal(a.f32(x1), a.size(x1) / 4, 61);
    fill_normal(a.f32(x2), a.size(x2) / 4, 62);
    fill_normal(a.f32(w), a.size(w) / 4, 63, 0.5f);
    fill_normal(a.f32(state), a.size(state) / 4, 64);
    const int32_t sa[] = {2, 2, 2, 2, 2, 2, 0, 0}, sb[] = {0, 2};
    std::copy(std::begin(sa), std::end(sa), a.i32(s1));
    std::copy(std::begin(sb), std::end(sb), a.i32(s2));
    a.node(OpKind::conv1d, y1, {x1, w, state, s1});
    a.node(OpKind::conv1d, y2, {x2, w, state, s2});
    const auto want = run_cpu(a), got = run_vulkan(*dev, a);
    for (int id : {y1, y2, state}) {
      const size_t n = a.size(id) / 4;
      CHECK(worst(floats_of(got, a, id, n), floats_of(want, a, id, n), 1e-6, 1e-5) <= 1.0);
    }
  }
}

TEST_CASE("vulkan delta_net: the gated delta rule per state slot, against the CPU", "[vulkan][kernels]") {
  Device* dev = vulkan(false);
  if (!dev) {
    sy::test::skip_unless_ci("no Vulkan device here");
    return;
  }
  struct Shape {
    int64_t dk, dv, kh, vh;
  };
  for (const Shape s : {Shape{64, 64, 2, 4}, Shape{48, 40, 1, 3}, Shape{128, 72, 2, 2}}) {
    INFO("d_k " << s.dk << ", d_v " << s.dv << ", " << s.kh << " key heads, " << s.vh << " value heads");
    const int64_t T = 7, slots = 3, ch = 2 * s.kh * s.dk + s.vh * s.dv;
    Arena a;
    // q, k and v are views into one [ch, T] activation, as the model cuts them.
    const int conv = a.add(StorageType::F32, ch, T);
    const int64_t row = ch * 4;
    const int q = a.view(conv, StorageType::F32, {s.dk, s.kh, T, 1}, {4, s.dk * 4, row, row * T}, 0);
    const int k = a.view(conv, StorageType::F32, {s.dk, s.kh, T, 1}, {4, s.dk * 4, row, row * T},
                         static_cast<size_t>(s.kh * s.dk * 4));
    const int v = a.view(conv, StorageType::F32, {s.dv, s.vh, T, 1}, {4, s.dv * 4, row, row * T},
                         static_cast<size_t>(2 * s.kh * s.dk * 4));
    const int g = a.add(StorageType::F32, s.vh, T), beta = a.add(StorageType::F32, s.vh, T);
    const int state = a.add(StorageType::F32, s.dk * s.dv * s.vh, slots);
    const int slot = a.add(StorageType::I32, T);
    const int out = a.add(StorageType::F32, s.dv, s.vh, T);
    float* c = a.f32(conv);
    fill_normal(c, static_cast<size_t>(ch * T), 71);
    // q and k normalised (q also scaled), as the model feeds them.
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < 2 * s.kh; ++h) {
        float* r = c + t * ch + h * s.dk;
        double ss = 0;
        for (int64_t i = 0; i < s.dk; ++i) ss += static_cast<double>(r[i]) * r[i];
        const float f = static_cast<float>(1.0 / std::sqrt(ss)) * (h < s.kh ? 1.0f / std::sqrt(static_cast<float>(s.dk)) : 1.0f);
        for (int64_t i = 0; i < s.dk; ++i) r[i] *= f;
      }
    std::mt19937 rng(72);
    std::uniform_real_distribution<float> ug(-2.f, 0.f), ub(0.05f, 0.95f);
    for (int64_t i = 0; i < s.vh * T; ++i) a.f32(g)[i] = ug(rng), a.f32(beta)[i] = ub(rng);
    fill_normal(a.f32(state), a.size(state) / 4, 73, 0.1f);
    const int32_t sl[T] = {1, 1, 1, 1, 0, 2, 2};
    std::copy(sl, sl + T, a.i32(slot));
    a.node(OpKind::delta_net, out, {q, k, v, g, beta, state, slot});
    const auto want = run_cpu(a), got = run_vulkan(*dev, a);
    for (int id : {out, state}) {
      const size_t n = a.size(id) / 4;
      CHECK(worst(floats_of(got, a, id, n), floats_of(want, a, id, n), 1e-6, 1e-5) <= 1.0);
    }
  }
}

TEST_CASE("vulkan cache and recurrent kernels decline what they do not run", "[vulkan][kernels]") {
  Device* dev = vulkan(false);
  if (!dev) {
    sy::test::skip_unless_ci("no Vulkan device here");
    return;
  }
  Arena a;
  const int rows = a.add(StorageType::F32, 256, 2);
  const int slots = a.add(StorageType::I32, 2);
  const int q4k = a.add(StorageType::Q4_K, 256, 1, 4);
  a.node(OpKind::set_rows, q4k, {rows, slots});
  CHECK(dev->supports(a.nodes[0], a.tensors) == Support::no);  // no quantizer here for K-quants
  // A key head size beyond the shader's shared q buffer.
  Arena b;
  const int q = b.add(StorageType::F32, 2048, 1, 1);
  const int kc = b.add(StorageType::F16, 2048, 1, 8);
  const int i1 = b.add(StorageType::I32, 1), i2 = b.add(StorageType::I32, 1), tb = b.add(StorageType::I32, 1, 1);
  const int o = b.add(StorageType::F32, 2048, 1, 1);
  b.node(OpKind::attention, o, {q, kc, kc, i1, i2, tb}, {8}, {1.f});
  CHECK(dev->supports(b.nodes[0], b.tensors) == Support::no);
  // delta_net with a key head size above the largest variant.
  Arena c;
  const int x = c.add(StorageType::F32, 256, 1, 1), gg = c.add(StorageType::F32, 1, 1);
  const int st = c.add(StorageType::F32, 256 * 256, 1), sl = c.add(StorageType::I32, 1);
  const int y = c.add(StorageType::F32, 256, 1, 1);
  c.node(OpKind::delta_net, y, {x, x, x, gg, gg, st, sl});
  CHECK(dev->supports(c.nodes[0], c.tensors) == Support::no);
}
