// Vulkan kernels (norm, rope, routing groups; fp8_qdq) against the CPU backend's scalar executor,
// through the plugin's public Device interface, on odd shapes in padded and transposed
// layouts. Every case runs on the portable path and again on the default path, which on a
// device with subgroup arithmetic (lavapipe has it) takes the subgroup reductions. Inputs
// come from fixed seeds. The destination's padding must come back untouched.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "executor.hpp"
#include "registry/registry.hpp"
#include "thread_pool.hpp"
#include "skip.hpp"

using namespace sy;

namespace {

registry::Registry& reg() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}

// A tensor the test owns on the host: layout and bytes, padding included.
struct Tensor {
  StorageType type = StorageType::F32;
  int64_t ne[4] = {1, 1, 1, 1};
  int64_t nb[4] = {0, 0, 0, 0};
  std::vector<std::byte> bytes;
  int alias = -1;  ///< index of the tensor whose memory this one is (in-place ops)

  [[nodiscard]] int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  [[nodiscard]] size_t offset(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return static_cast<size_t>(i0 * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3]);
  }
  template <class F>
  void each(F&& f) const {
    for (int64_t i3 = 0; i3 < ne[3]; ++i3)
      for (int64_t i2 = 0; i2 < ne[2]; ++i2)
        for (int64_t i1 = 0; i1 < ne[1]; ++i1)
          for (int64_t i0 = 0; i0 < ne[0]; ++i0) f(offset(i0, i1, i2, i3));
  }
};

// A tensor of shape `ne` whose dimensions lie in memory in `order` (innermost first:
// {1, 0, 2, 3} is a transpose), each padded by `pad` elements; padding bytes are 0xA5.
Tensor layout(StorageType type, std::array<int64_t, 4> ne, std::array<int, 4> order = {0, 1, 2, 3},
              std::array<int64_t, 4> pad = {0, 0, 0, 0}) {
  Tensor t;
  t.type = type;
  int64_t stride = 4;  // F32 and I32 only here
  for (int d : order) {
    t.ne[d] = ne[static_cast<size_t>(d)];
    t.nb[d] = stride;
    stride *= ne[static_cast<size_t>(d)] + pad[static_cast<size_t>(d)];
  }
  t.bytes.assign(static_cast<size_t>(stride), std::byte{0xA5});
  return t;
}

Tensor f32(std::array<int64_t, 4> ne, std::array<int, 4> order = {0, 1, 2, 3}, std::array<int64_t, 4> pad = {0, 0, 0, 0}) {
  return layout(StorageType::F32, ne, order, pad);
}

void fill(Tensor& t, unsigned seed, float sd = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, sd);
  t.each([&](size_t o) {
    const float v = nd(rng);
    std::memcpy(t.bytes.data() + o, &v, 4);
  });
}

void set_f32(Tensor& t, size_t o, float v) { std::memcpy(t.bytes.data() + o, &v, 4); }
float get_f32(const std::vector<std::byte>& b, size_t o) {
  float v;
  std::memcpy(&v, b.data() + o, 4);
  return v;
}
int32_t get_i32(const std::vector<std::byte>& b, size_t o) {
  int32_t v;
  std::memcpy(&v, b.data() + o, 4);
  return v;
}

Tensor i32(std::vector<int32_t> v, std::array<int64_t, 4> ne) {
  Tensor t = layout(StorageType::I32, ne);
  REQUIRE(static_cast<int64_t>(v.size()) == t.elements());
  std::memcpy(t.bytes.data(), v.data(), v.size() * 4);
  return t;
}

struct Case {
  std::vector<Tensor> t;
  GraphNode node;
};

std::vector<GraphTensor> graph_tensors(const Case& c) {
  std::vector<GraphTensor> g(c.t.size());
  for (size_t i = 0; i < c.t.size(); ++i) {
    g[i].type = c.t[i].type;
    std::copy(std::begin(c.t[i].ne), std::end(c.t[i].ne), g[i].ne);
    std::copy(std::begin(c.t[i].nb), std::end(c.t[i].nb), g[i].nb);
  }
  return g;
}

// Memory of tensor i (its alias's when it has one).
size_t owner(const Case& c, size_t i) { return c.t[i].alias >= 0 ? static_cast<size_t>(c.t[i].alias) : i; }

// The destination's bytes after the CPU's scalar executor ran the node.
std::vector<std::byte> run_cpu(const Case& c) {
  std::vector<std::vector<std::byte>> mem;
  for (const auto& t : c.t) mem.push_back(t.bytes);
  auto g = graph_tensors(c);
  for (size_t i = 0; i < g.size(); ++i) g[i].data = mem[owner(c, i)].data();
  cpu::ThreadPool pool(1);
  cpu::Executor ex(cpu::Isa::scalar, pool);
  const SubGraph sg{g, {&c.node, 1}, 0};
  const auto st = ex.run(sg);
  INFO(st.message());
  REQUIRE(st.is_ok());
  return mem[owner(c, static_cast<size_t>(c.node.dst))];
}

// The destination's bytes after `dev` ran the node on device-local buffers.
std::vector<std::byte> run_device(Device& dev, const Case& c) {
  auto g = graph_tensors(c);
  REQUIRE(dev.supports(c.node, g) == Support::yes);
  std::vector<std::unique_ptr<Buffer>> bufs(c.t.size());
  for (size_t i = 0; i < c.t.size(); ++i) {
    if (c.t[i].alias >= 0) continue;
    auto b = dev.allocate(c.t[i].bytes.size(), BufferKind::device_local);
    REQUIRE(b.has_value());
    bufs[i] = std::move(b.value());
    REQUIRE(bufs[i]->upload(0, c.t[i].bytes).is_ok());
  }
  for (size_t i = 0; i < g.size(); ++i) g[i].buffer = bufs[owner(c, i)].get();
  const SubGraph sg{g, {&c.node, 1}, 0};
  const auto st = dev.execute(sg);
  INFO(st.message());
  REQUIRE(st.is_ok());
  REQUIRE(dev.synchronize().is_ok());
  const size_t d = owner(c, static_cast<size_t>(c.node.dst));
  std::vector<std::byte> out(c.t[d].bytes.size());
  REQUIRE(bufs[d]->download(0, out).is_ok());
  return out;
}

// The logical elements agree within abs + rel * |reference| (I32: exactly), and every
// other byte of the destination's memory is what it was before the run.
void compare(const Case& c, const std::vector<std::byte>& got, const std::vector<std::byte>& want, double abs_tol,
             double rel_tol) {
  const auto& dst = c.t[static_cast<size_t>(c.node.dst)];
  const auto& before = c.t[owner(c, static_cast<size_t>(c.node.dst))].bytes;
  std::vector<bool> logical(got.size(), false);
  double worst = 0;
  size_t bad = 0;
  std::string first_bad;
  dst.each([&](size_t o) {
    std::fill_n(logical.begin() + static_cast<std::ptrdiff_t>(o), 4, true);
    const bool ints = dst.type == StorageType::I32;
    const double r = ints ? get_i32(want, o) : get_f32(want, o), v = ints ? get_i32(got, o) : get_f32(got, o);
    const double err = std::fabs(v - r), tol = abs_tol + rel_tol * std::fabs(r);
    if (err > 0) worst = std::max(worst, err / tol);
    if (!(err <= tol) && bad++ == 0)
      first_bad = "byte " + std::to_string(o) + ": " + std::to_string(v) + ", expected " + std::to_string(r);
  });
  size_t touched = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!logical[i] && got[i] != before[i]) ++touched;
  INFO("op " << op_name(c.node.op) << ": worst error / tolerance " << worst << "; first mismatch at " << first_bad);
  CHECK(bad == 0);
  CHECK(touched == 0);
}

// A Vulkan device on the portable path or on the device's default paths; nullptr when the
// plugin or a device is missing (the test then only warns: CI's lavapipe makes it run).
struct Devices {
  registry::Owned<Backend> portable, fast;
};

Devices& devices() {
  static Devices d = [] {
    Devices r;
    if (!reg().find(ComponentKind::backend, "vulkan")) return r;
    ::setenv("SWITCHYARD_VULKAN_PATH", "portable", 1);
    auto p = reg().create_backend("vulkan", {});
    ::unsetenv("SWITCHYARD_VULKAN_PATH");
    auto f = reg().create_backend("vulkan", {});
    if (p && f && p.value()->device_count() > 0 && f.value()->device_count() > 0) {
      r.portable = std::move(p.value());
      r.fast = std::move(f.value());
    }
    return r;
  }();
  return d;
}

bool have_device() {
  if (devices().fast) return true;
  sy::test::skip_unless_ci("no Vulkan backend or device here");
  return false;
}

// Runs the case on both paths (or only the portable one) against the CPU.
void check(const Case& c, double abs_tol, double rel_tol, bool both_paths = true) {
  const auto want = run_cpu(c);
  for (Backend* be : {devices().portable.get(), both_paths ? devices().fast.get() : nullptr}) {
    if (!be) continue;
    INFO((be == devices().portable.get() ? "portable path" : "default path"));
    compare(c, run_device(be->device(0), c), want, abs_tol, rel_tol);
  }
}

Support answer(const Case& c) { return devices().fast->device(0).supports(c.node, graph_tensors(c)); }

GraphNode node(OpKind op, int dst, std::initializer_list<int> src) {
  GraphNode n;
  n.op = op;
  n.dst = dst;
  int s = 0;
  for (int i : src) n.src[s++] = i;
  return n;
}

}  // namespace

TEST_CASE("vulkan: the default path lists the subgroup reductions where the device has them", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  const auto fast = devices().fast->device(0).info().features;
  const auto portable = devices().portable->device(0).info().features;
  const auto mentions = [](const std::vector<std::string>& f, const std::string& what) {
    return std::any_of(f.begin(), f.end(), [&](const std::string& s) { return s.find(what) != std::string::npos; });
  };
  if (!mentions(fast, ", arithmetic")) {
    WARN("this device has no subgroup arithmetic: only the portable path is tested");
    return;
  }
  for (const char* path : {"path rms_norm: subgroup", "path l2_norm: subgroup", "path softmax: subgroup"}) {
    CHECK(mentions(fast, path));
    CHECK_FALSE(mentions(portable, path));
  }
}

TEST_CASE("vulkan: rms_norm and l2_norm on padded and transposed rows", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  for (OpKind op : {OpKind::rms_norm, OpKind::l2_norm}) {
    // Rows shorter and longer than a workgroup, a one-element row, padded and transposed.
    for (const auto& [shape, order] : std::vector<std::pair<std::array<int64_t, 4>, std::array<int, 4>>>{
             {{37, 5, 3, 1}, {0, 1, 2, 3}}, {{300, 3, 1, 2}, {0, 1, 2, 3}}, {{1, 7, 1, 1}, {0, 1, 2, 3}},
             {{19, 6, 2, 1}, {1, 0, 2, 3}}}) {
      Case c;
      c.t.push_back(f32(shape, {0, 1, 2, 3}, {3, 1, 0, 2}));
      c.t.push_back(f32(shape, order, {2, 0, 1, 0}));
      fill(c.t[1], 11, 3.f);
      c.node = node(op, 0, {1});
      c.node.f[0] = 1e-5f;
      INFO(op_name(op) << " [" << shape[0] << ", " << shape[1] << ", " << shape[2] << ", " << shape[3] << "]");
      check(c, 1e-6, 2e-6);
    }
  }
}

TEST_CASE("vulkan: rms_norm over more rows than one grid dimension holds", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  // 70000 rows: the row index spans two workgroup dimensions. The row numbering is the
  // same in both variants and lavapipe is slow at this many workgroups: portable only.
  Case c;
  c.t.push_back(f32({3, 70000, 1, 1}));
  c.t.push_back(f32({3, 70000, 1, 1}, {0, 1, 2, 3}, {1, 0, 0, 0}));
  fill(c.t[1], 14);
  c.node = node(OpKind::rms_norm, 0, {1});
  c.node.f[0] = 1e-5f;
  check(c, 1e-6, 2e-6, false);
}

TEST_CASE("vulkan: l2_norm divides by eps when the norm is smaller", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  Case c;
  c.t.push_back(f32({9, 3, 1, 1}));
  c.t.push_back(f32({9, 3, 1, 1}, {0, 1, 2, 3}, {4, 0, 0, 0}));
  fill(c.t[1], 12, 1e-4f);
  c.t[1].each([&, r = 0](size_t o) mutable { if (r++ < 9) set_f32(c.t[1], o, 0.f); });  // one all-zero row
  c.node = node(OpKind::l2_norm, 0, {1});
  c.node.f[0] = 1e-2f;
  check(c, 1e-7, 2e-6);
}

TEST_CASE("vulkan: rms_norm in place", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  Case c;
  c.t.push_back(f32({129, 4, 2, 1}, {0, 1, 2, 3}, {7, 0, 0, 0}));
  fill(c.t[0], 13);
  c.t.push_back(c.t[0]);
  c.t[1].alias = 0;
  c.node = node(OpKind::rms_norm, 1, {0});
  c.node.f[0] = 1e-6f;
  check(c, 1e-6, 2e-6);
}

TEST_CASE("vulkan: softmax with -inf entries, an all -inf row and large values", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  for (const auto& [shape, order] : std::vector<std::pair<std::array<int64_t, 4>, std::array<int, 4>>>{
           {{37, 6, 1, 1}, {0, 1, 2, 3}}, {{301, 2, 2, 1}, {0, 1, 2, 3}}, {{23, 5, 1, 2}, {1, 0, 2, 3}}}) {
    Case c;
    c.t.push_back(f32(shape, {0, 1, 2, 3}, {1, 2, 0, 0}));
    c.t.push_back(f32(shape, order, {0, 3, 0, 0}));
    fill(c.t[1], 21, 4.f);
    int64_t k = 0;
    const int64_t n = shape[0];
    c.t[1].each([&](size_t o) {
      const int64_t i = k % n, r = k / n;
      ++k;
      if (r == 1) set_f32(c.t[1], o, -INFINITY);                    // fully masked row
      else if (r == 2 && i % 3 == 0) set_f32(c.t[1], o, -INFINITY);  // partly masked
      else if (r == 3) set_f32(c.t[1], o, 1000.f + static_cast<float>(i % 5));
    });
    c.node = node(OpKind::softmax, 0, {1});
    INFO("softmax [" << shape[0] << ", " << shape[1] << ", " << shape[2] << ", " << shape[3] << "]");
    check(c, 1e-7, 1e-5);
  }
}

namespace {

// rope of x [hd, heads, tokens, n3] (heads padded apart), positions below 700.
Case rope_case(int mode, int64_t hd, int64_t n_dims, int64_t heads, int64_t tokens, bool factors, float freq_scale,
               bool in_place, unsigned seed, int64_t n3 = 1) {
  Case c;
  c.t.push_back(f32({hd, heads, tokens, n3}, {0, 1, 2, 3}, {3, 1, 0, 1}));  // x
  fill(c.t[0], seed);
  std::mt19937 rng(seed + 1);
  std::vector<int32_t> pos(static_cast<size_t>(tokens * (mode == 2 ? 4 : 1)));
  for (auto& p : pos) p = static_cast<int32_t>(rng() % 700);
  c.t.push_back(i32(pos, {static_cast<int64_t>(pos.size()), 1, 1, 1}));
  if (factors) {
    Tensor ff = f32({n_dims / 2, 1, 1, 1});
    for (int64_t i = 0; i < n_dims / 2; ++i) set_f32(ff, static_cast<size_t>(i * 4), 1.f + 0.37f * static_cast<float>(i % 5));
    c.t.push_back(ff);
  }
  if (in_place) {
    c.t.push_back(c.t[0]);
    c.t.back().alias = 0;
  } else {
    c.t.push_back(f32({hd, heads, tokens, n3}, {1, 0, 2, 3}, {0, 2, 1, 0}));  // a transposed destination
  }
  const int dst = static_cast<int>(c.t.size()) - 1;
  c.node = factors ? node(OpKind::rope, dst, {0, 1, 2}) : node(OpKind::rope, dst, {0, 1});
  c.node.i[0] = mode;
  c.node.i[1] = static_cast<int32_t>(n_dims);
  if (mode == 2) c.node.i[2] = 3, c.node.i[3] = 2, c.node.i[4] = 2;  // 7 indices: they repeat over 8 pairs
  c.node.f[0] = 10000.f;
  c.node.f[1] = freq_scale;
  return c;
}

}  // namespace

TEST_CASE("vulkan: rope normal, neox and multi, partial rotation, factors, scale, in place", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  // Angles reach 700 radians, where floats are 6e-5 apart: that bounds what a float
  // shader can match of the CPU's double-precision angle (inputs are of order 1).
  constexpr double kAbs = 1e-4, kRel = 0;
  for (int mode : {0, 1, 2}) {
    INFO("mode " << mode);
    check(rope_case(mode, 16, 16, 3, 5, false, 0.f, false, 31), kAbs, kRel);
    check(rope_case(mode, 18, 16, 2, 3, true, 0.5f, false, 32), kAbs, kRel);  // two dimensions pass through
    check(rope_case(mode, 21, 6, 3, 2, false, 1.f, true, 33), kAbs, kRel);    // odd head size, in place
    check(rope_case(mode, 8, 8, 2, 3, true, 1.f, false, 34, 2), kAbs, kRel);  // a fourth dimension
  }
}

TEST_CASE("vulkan: top_k and argsort with ties, on transposed rows", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  for (const auto& [n, rows, transposed] : std::vector<std::tuple<int64_t, int64_t, bool>>{
           {37, 5, false}, {8, 9, true}, {1, 3, false}, {1000, 2, false}, {256, 3, true}}) {
    Tensor x = f32({n, rows, 1, 1}, transposed ? std::array<int, 4>{1, 0, 2, 3} : std::array<int, 4>{0, 1, 2, 3},
                   {2, 1, 0, 0});
    fill(x, 41);
    // Values on a coarse grid, so rows hold many ties (broken by the lower index).
    x.each([&](size_t o) { set_f32(x, o, std::round(get_f32(x.bytes, o) * 2.f) / 2.f); });
    for (int64_t k : {int64_t{1}, std::min<int64_t>(n, 4), n}) {
      Case c;
      c.t.push_back(x);
      c.t.push_back(layout(StorageType::I32, {k, rows, 1, 1}));
      c.node = node(OpKind::top_k, 1, {0});
      c.node.i[0] = static_cast<int32_t>(k);
      INFO("top_k n " << n << " k " << k);
      check(c, 0, 0);
    }
    Case c;
    c.t.push_back(x);
    c.t.push_back(layout(StorageType::I32, {n, rows, 1, 1}));
    c.node = node(OpKind::argsort, 1, {0});
    INFO("argsort n " << n);
    check(c, 0, 0);
  }
}

TEST_CASE("vulkan: expert_weights renormalised or not, scaled or not", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  const int64_t experts = 11, used = 3, tokens = 7;
  std::mt19937 rng(51);
  std::vector<int32_t> ids;
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<int32_t> e(experts);
    for (int32_t i = 0; i < experts; ++i) e[static_cast<size_t>(i)] = i;
    std::shuffle(e.begin(), e.end(), rng);
    ids.insert(ids.end(), e.begin(), e.begin() + used);
  }
  for (int renorm : {0, 1})
    for (float scale : {0.f, 2.5f}) {
      Case c;
      c.t.push_back(f32({experts, tokens, 1, 1}, {1, 0, 2, 3}, {1, 2, 0, 0}));  // probabilities, transposed
      fill(c.t[0], 52);
      c.t[0].each([&](size_t o) { set_f32(c.t[0], o, 1.f / (1.f + std::exp(-get_f32(c.t[0].bytes, o)))); });
      c.t.push_back(i32(ids, {used, tokens, 1, 1}));
      c.t.push_back(f32({used, tokens, 1, 1}, {0, 1, 2, 3}, {2, 0, 0, 0}));
      c.node = node(OpKind::expert_weights, 2, {0, 1});
      c.node.i[0] = renorm;
      c.node.f[0] = scale;
      INFO("renormalise " << renorm << " scale " << scale);
      check(c, 1e-7, 1e-6);
    }
}

TEST_CASE("vulkan: moe_combine over a permuted expert output", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  Case c;
  c.t.push_back(f32({13, 3, 7, 1}, {2, 0, 1, 3}, {1, 0, 2, 0}));  // y [d, used, tokens], tokens innermost
  fill(c.t[0], 61);
  c.t.push_back(f32({3, 7, 1, 1}, {0, 1, 2, 3}, {1, 0, 0, 0}));
  fill(c.t[1], 62);
  c.t.push_back(f32({13, 7, 1, 1}, {0, 1, 2, 3}, {3, 0, 0, 0}));
  c.node = node(OpKind::moe_combine, 2, {0, 1});
  check(c, 1e-6, 1e-6);
}

TEST_CASE("vulkan: concat along each dimension, strided inputs", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  const std::array<int64_t, 4> a_ne = {5, 3, 2, 2};
  for (int dim = 0; dim < 4; ++dim) {
    std::array<int64_t, 4> b_ne = a_ne, y_ne = a_ne;
    b_ne[static_cast<size_t>(dim)] = 3;
    y_ne[static_cast<size_t>(dim)] += 3;
    Case c;
    c.t.push_back(f32(a_ne, {0, 1, 2, 3}, {1, 0, 1, 0}));
    fill(c.t[0], 71);
    c.t.push_back(f32(b_ne, {1, 0, 3, 2}, {0, 2, 0, 0}));
    fill(c.t[1], 72);
    c.t.push_back(f32(y_ne, {0, 1, 2, 3}, {0, 1, 0, 0}));
    c.node = node(OpKind::concat, 2, {0, 1});
    c.node.i[0] = dim;
    INFO("dim " << dim);
    check(c, 0, 0);
  }
}

// fp8_qdq where an encoder goes wrong: every E4M3 grid value, each midpoint between
// neighbours (a tie: to the even code) and the floats either side of it, the subnormal
// range, 448 and beyond (saturation), infinities, a NaN, signed zeros, all of them with both
// signs. Against the CPU executor (sdk fp8.cpp) bit for bit, NaN as NaN; once with scale 1
// (the ties exact) and once with the largest of two scale tensors, a NaN and a negative
// element among them, which the op passes over as std::max does.
TEST_CASE("vulkan: fp8_qdq rounds ties to even, saturates and keeps NaN as the SDK does", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  std::vector<float> xs;
  const auto e4m3 = [](int c) {  // positive finite codes 0..126
    const int e = c >> 3, m = c & 7;
    return e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(static_cast<float>(8 + m), e - 10);
  };
  for (int c = 0; c < 126; ++c) {
    const float a = e4m3(c), b = e4m3(c + 1), mid = (a + b) / 2;  // exact: one more bit
    for (float v : {a, mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1e9f)}) xs.push_back(v);
  }
  for (float v : {448.f, 464.f, 479.f, 480.f, 1e30f, INFINITY, std::ldexp(1.f, -10), std::ldexp(1.f, -11),
                  std::ldexp(3.f, -11), 1e-30f, 0.f, NAN})
    xs.push_back(v);
  const size_t n = xs.size();
  for (size_t i = 0; i < n; ++i) xs.push_back(-xs[i]);
  const int64_t len = static_cast<int64_t>(xs.size());
  for (int variant = 0; variant < 2; ++variant) {
    INFO((variant == 0 ? "scale 1" : "scales {0.37, NaN, -5} and {0.2}"));
    Case c;
    c.t.push_back(f32({len, 1, 1, 1}));
    c.t.back().each([&, i = size_t{0}](size_t o) mutable { set_f32(c.t.back(), o, xs[i++]); });
    c.t.push_back(f32({len, 1, 1, 1}));
    if (variant == 0) {
      c.t.push_back(f32({1, 1, 1, 1}));
      set_f32(c.t[2], 0, 1.f);
      c.node = node(OpKind::fp8_qdq, 1, {0, 2});
    } else {
      c.t.push_back(f32({3, 1, 1, 1}));
      set_f32(c.t[2], 0, 0.37f);
      set_f32(c.t[2], 4, NAN);
      set_f32(c.t[2], 8, -5.f);
      c.t.push_back(f32({1, 1, 1, 1}));
      set_f32(c.t[3], 0, 0.2f);
      c.node = node(OpKind::fp8_qdq, 1, {0, 2, 3});
    }
    const auto want = run_cpu(c);
    for (Backend* be : {devices().portable.get(), devices().fast.get()}) {
      const auto got = run_device(be->device(0), c);
      size_t differ = 0;
      std::string first;
      for (int64_t i = 0; i < len; ++i) {
        const float g = get_f32(got, static_cast<size_t>(4 * i)), w = get_f32(want, static_cast<size_t>(4 * i));
        const bool same = std::isnan(w) ? std::isnan(g) : std::memcmp(&g, &w, 4) == 0;
        if (!same && differ++ == 0)
          first = "x " + std::to_string(xs[static_cast<size_t>(i)]) + ": got " + std::to_string(g) + ", want " +
                  std::to_string(w);
      }
      INFO(first);
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("vulkan: what the norm, rope and routing kernels refuse", "[vulkan][vulkan_ops]") {
  if (!have_device()) return;
  Case c;
  c.t.push_back(f32({8, 2, 1, 1}));
  c.t.push_back(layout(StorageType::F16, {8, 2, 1, 1}));
  c.t[1].nb[0] = 2, c.t[1].nb[1] = 16, c.t[1].nb[2] = c.t[1].nb[3] = 32;
  c.node = node(OpKind::rms_norm, 0, {1});
  CHECK(answer(c) == Support::no);  // not F32
  c.node = node(OpKind::softmax, 0, {0, 0});
  CHECK(answer(c) == Support::no);  // a second source (a mask) is not applied

  Case s;
  s.t.push_back(f32({1025, 2, 1, 1}));
  s.t.push_back(layout(StorageType::I32, {4, 2, 1, 1}));
  s.node = node(OpKind::top_k, 1, {0});
  s.node.i[0] = 4;
  CHECK(answer(s) == Support::no);  // longer than the shared-memory sort
  s.t[0] = f32({1024, 2, 1, 1});
  CHECK(answer(s) == Support::yes);
  s.node.i[0] = 5;
  CHECK(answer(s) == Support::no);  // k disagrees with the destination

  Case r = rope_case(0, 16, 16, 2, 3, false, 0.f, false, 1);
  r.node.i[1] = 15;
  CHECK(answer(r) == Support::no);  // odd rotated dims
  r.node.i[1] = 18;
  CHECK(answer(r) == Support::no);  // more than the head
  r = rope_case(2, 16, 16, 2, 3, false, 0.f, false, 1);
  r.node.i[2] = r.node.i[3] = r.node.i[4] = 0;
  CHECK(answer(r) == Support::no);  // multi without sections
  r = rope_case(1, 16, 16, 2, 3, false, 0.f, false, 1);
  r.t[1] = i32({1, 2}, {2, 1, 1, 1});
  CHECK(answer(r) == Support::no);  // a position short
}
