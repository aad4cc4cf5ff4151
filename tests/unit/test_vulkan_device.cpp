// The Vulkan device contract on lavapipe (or a GPU): buffer kinds and who reads them,
// queued copies and events in queue order, refusal of memory the device cannot address,
// and the elementwise kernels against plain loops on odd, strided shapes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "registry/registry.hpp"
#include "switchyard/quant.hpp"
#include "skip.hpp"

using namespace sy;

namespace {

registry::Registry& reg() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}

// A Vulkan backend, or nullptr after a visible WARN (a failure under CI, which has lavapipe).
registry::Owned<Backend> vulkan_or_skip() {
  if (!reg().find(ComponentKind::backend, "vulkan")) {
    sy::test::skip_unless_ci("the Vulkan backend is not built here");
    return nullptr;
  }
  auto be = reg().create_backend("vulkan", {});
  if (!be.has_value()) {
    sy::test::skip_unless_ci("no Vulkan device: " + be.status().message());
    return nullptr;
  }
  return std::move(be.value());
}

using Shape = std::array<int64_t, 4>;

// A tensor in a buffer of its own, laid out by `nb` (bytes) after `offset` bytes.
struct DevTensor {
  std::unique_ptr<Buffer> buf;
  GraphTensor t;
  size_t bytes = 0;

  size_t pos(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return t.offset + static_cast<size_t>(i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3]);
  }
};

int64_t elem_bytes(StorageType type) { return type == StorageType::F16 || type == StorageType::BF16 ? 2 : 4; }

// Strides with gaps: each dimension's stride is `gap` elements more than a dense one.
Shape padded(StorageType type, const Shape& ne, int64_t step = 1, int64_t gap = 3) {
  const int64_t es = elem_bytes(type);
  Shape nb{es * step, 0, 0, 0};
  for (int d = 1; d < 4; ++d) nb[d] = nb[d - 1] * ne[d - 1] + gap * es;
  return nb;
}

Shape dense(StorageType type, const Shape& ne) { return padded(type, ne, 1, 0); }

DevTensor make(Device& dev, StorageType type, const Shape& ne, const Shape& nb, BufferKind kind = BufferKind::device_local,
               size_t offset = 16) {
  DevTensor d;
  d.t.type = type;
  size_t end = static_cast<size_t>(elem_bytes(type));
  for (int k = 0; k < 4; ++k) {
    d.t.ne[k] = ne[k];
    d.t.nb[k] = nb[k];
    end += static_cast<size_t>((ne[k] - 1) * nb[k]);
  }
  d.t.offset = offset;
  d.bytes = offset + end + 8;
  auto b = dev.allocate(d.bytes, kind);
  REQUIRE(b.has_value());
  d.buf = std::move(b.value());
  d.t.buffer = d.buf.get();
  return d;
}

// Writes f(i0..i3) as the tensor's elements (the gaps hold a marker) and uploads them.
void fill(DevTensor& d, const std::function<float(int64_t, int64_t, int64_t, int64_t)>& f) {
  std::vector<std::byte> img(d.bytes, std::byte{0x7f});
  const auto& ne = d.t.ne;
  for (int64_t i3 = 0; i3 < ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < ne[0]; ++i0) {
          const float v = f(i0, i1, i2, i3);
          if (d.t.type == StorageType::F16 || d.t.type == StorageType::BF16) {
            const uint16_t h = d.t.type == StorageType::F16 ? fp32_to_fp16(v) : fp32_to_bf16(v);
            std::memcpy(&img[d.pos(i0, i1, i2, i3)], &h, 2);
          } else {
            std::memcpy(&img[d.pos(i0, i1, i2, i3)], &v, 4);
          }
        }
  REQUIRE(d.buf->upload(0, img).is_ok());
}

std::vector<std::byte> image(const DevTensor& d) {
  std::vector<std::byte> img(d.bytes);
  REQUIRE(d.buf->download(0, img).is_ok());
  return img;
}

float value_at(const DevTensor& d, const std::vector<std::byte>& img, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  if (d.t.type == StorageType::F16 || d.t.type == StorageType::BF16) {
    uint16_t h;
    std::memcpy(&h, &img[d.pos(i0, i1, i2, i3)], 2);
    return d.t.type == StorageType::F16 ? fp16_to_fp32(h) : bf16_to_fp32(h);
  }
  float v;
  std::memcpy(&v, &img[d.pos(i0, i1, i2, i3)], 4);
  return v;
}

// Runs one node whose destination is tensors[0] and sources tensors[1..]; waits for it.
Status run_node(Device& dev, OpKind op, std::vector<const DevTensor*> tensors, std::array<float, 4> f = {}) {
  std::vector<GraphTensor> ts;
  for (const auto* t : tensors) ts.push_back(t->t);
  GraphNode n;
  n.op = op;
  n.dst = 0;
  for (size_t s = 1; s < ts.size(); ++s) n.src[s - 1] = static_cast<int32_t>(s);
  for (int k = 0; k < 4; ++k) n.f[k] = f[k];
  if (dev.supports(n, ts) == Support::no) return error::unsupported(std::string(op_name(op)) + " not supported");
  SubGraph g{ts, std::span<const GraphNode>(&n, 1), 0};
  if (auto st = dev.execute(g); !st) return st;
  return dev.synchronize();
}

float input(int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  // Spans negative and positive values, large enough to reach the activations' tails.
  const auto k = static_cast<float>(((i0 * 7 + i1 * 13 + i2 * 29 + i3 * 53) % 61) - 30);
  return k * 0.37f;
}

// |got - want| <= abs + rel * |want|, for every element.
void expect_close(const DevTensor& y, const std::function<float(int64_t, int64_t, int64_t, int64_t)>& want, float rel,
                  float abs = 0) {
  const auto img = image(y);
  int bad = 0;
  for (int64_t i3 = 0; i3 < y.t.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < y.t.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < y.t.ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < y.t.ne[0]; ++i0) {
          const float g = value_at(y, img, i0, i1, i2, i3), w = want(i0, i1, i2, i3);
          if (!(std::fabs(g - w) <= abs + rel * std::fabs(w)) && bad++ < 5)
            FAIL_CHECK("element (" << i0 << "," << i1 << "," << i2 << "," << i3 << "): got " << g << ", want " << w);
        }
  CHECK(bad == 0);
}

const Shape kOdd{7, 5, 3, 2};

}  // namespace

TEST_CASE("vulkan device: buffer kinds say who reads them in place", "[vulkan]") {
  auto be = vulkan_or_skip();
  if (!be) return;
  auto& dev = be->device(0);
  const auto info = dev.info();
  INFO(info.description);
  CHECK_FALSE(info.reads_host_memory);
  for (auto kind : {BufferKind::device_local, BufferKind::host_mapped, BufferKind::staging}) {
    INFO(buffer_kind_name(kind));
    auto b = dev.allocate(3 * 1024 * 1024 + 5, kind);
    REQUIRE(b.has_value());
    auto& buf = *b.value();
    CHECK(buf.kind() == kind);
    CHECK(buf.size() == 3 * 1024 * 1024 + 5);
    const bool host_reads = kind != BufferKind::device_local || info.unified_memory;
    CHECK((buf.host_data() != nullptr) == host_reads);
    std::vector<std::byte> src(buf.size());
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>((i * 131u) & 0xff);
    REQUIRE(buf.upload(0, src).is_ok());
    std::vector<std::byte> back(src.size());
    REQUIRE(buf.download(0, back).is_ok());
    CHECK(back == src);
    if (host_reads) CHECK(std::memcmp(buf.host_data(), src.data(), src.size()) == 0);
    std::vector<std::byte> patch(100, std::byte{0x5a});
    CHECK(buf.upload(buf.size() - 10, patch).code() == StatusCode::invalid_argument);
    CHECK(buf.download(buf.size() - 10, patch).code() == StatusCode::invalid_argument);
  }
  bool listed_version = false;
  for (const auto& f : info.features) listed_version |= f.rfind("vulkan 1.", 0) == 0;
  CHECK(listed_version);
}

TEST_CASE("vulkan device: queued copies and kernels run in queue order", "[vulkan]") {
  auto be = vulkan_or_skip();
  if (!be) return;
  auto& dev = be->device(0);
  // Bigger than one staging chunk (16 MiB), so the copy goes in pieces.
  const size_t n = (20u << 20) + 12;
  auto b = dev.allocate(n, BufferKind::device_local);
  REQUIRE(b.has_value());
  auto& buf = *b.value();
  std::vector<std::byte> first(n), second(n);
  for (size_t i = 0; i < n; ++i) {
    first[i] = static_cast<std::byte>((i * 7u) & 0xff);
    second[i] = static_cast<std::byte>((i * 11u + 3) & 0xff);
  }
  std::vector<std::byte> src = first, got_first(n), got_second(n);
  REQUIRE(dev.copy_to_device(buf, 0, src).is_ok());
  // The source was read before the call returned: changing it now changes nothing queued.
  std::fill(src.begin(), src.end(), std::byte{0});
  REQUIRE(dev.copy_to_host(buf, 0, got_first).is_ok());
  const uint64_t e1 = dev.record_event();
  REQUIRE(dev.copy_to_device(buf, 0, second).is_ok());
  REQUIRE(dev.copy_to_host(buf, 0, got_second).is_ok());
  const uint64_t e2 = dev.record_event();
  CHECK(e1 > 0);
  CHECK(e2 > e1);
  REQUIRE(dev.wait_event(e1).is_ok());
  CHECK(got_first == first);
  REQUIRE(dev.wait_event(e2).is_ok());
  CHECK(got_second == second);

  // Upload, kernel, download queued back to back, then one wait.
  auto x = make(dev, StorageType::F32, kOdd, dense(StorageType::F32, kOdd));
  auto y = make(dev, StorageType::F32, kOdd, dense(StorageType::F32, kOdd));
  const size_t count = static_cast<size_t>(x.t.elements());
  std::vector<float> xv(count), yv(count, -1.0f);
  for (size_t i = 0; i < count; ++i) xv[i] = static_cast<float>(i) - 100.0f;
  REQUIRE(dev.copy_to_device(*x.buf, x.t.offset, std::as_bytes(std::span(xv))).is_ok());
  std::vector<GraphTensor> ts{y.t, x.t};
  GraphNode node;
  node.op = OpKind::scale;
  node.dst = 0;
  node.src[0] = 1;
  node.f[0] = 0.5f;
  REQUIRE(dev.execute({ts, std::span<const GraphNode>(&node, 1), 0}).is_ok());
  REQUIRE(dev.copy_to_host(*y.buf, y.t.offset, std::as_writable_bytes(std::span(yv))).is_ok());
  REQUIRE(dev.wait_event(dev.record_event()).is_ok());
  for (size_t i = 0; i < count; ++i) CHECK(yv[i] == xv[i] * 0.5f);
  REQUIRE(dev.synchronize().is_ok());
}

TEST_CASE("vulkan device: many steps queued without a wait keep their records", "[vulkan]") {
  auto be = vulkan_or_skip();
  if (!be) return;
  auto& dev = be->device(0);
  const auto f32 = StorageType::F32;
  auto a = make(dev, f32, kOdd, dense(f32, kOdd));
  auto b = make(dev, f32, kOdd, padded(f32, kOdd));
  auto one = make(dev, f32, Shape{1, 1, 1, 1}, dense(f32, Shape{1, 1, 1, 1}));
  fill(a, input);
  fill(one, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
  // Step: b = a * 2; a = b + 1. Exact in f32 on any IEEE device, so the host replays it.
  std::vector<GraphTensor> ts{a.t, b.t, one.t};
  GraphNode twice, plus;
  twice.op = OpKind::scale;
  twice.dst = 1;
  twice.src[0] = 0;
  twice.f[0] = 2.0f;
  plus.op = OpKind::add;
  plus.dst = 0;
  plus.src[0] = 1;
  plus.src[1] = 2;
  const int single = 60, batched = 40;  // 120 submissions: more than the queue keeps in flight
  for (int i = 0; i < single; ++i) {
    REQUIRE(dev.execute({ts, std::span<const GraphNode>(&twice, 1), 0}).is_ok());
    REQUIRE(dev.execute({ts, std::span<const GraphNode>(&plus, 1), 0}).is_ok());
  }
  std::vector<GraphNode> nodes;
  for (int i = 0; i < batched; ++i) {
    nodes.push_back(twice);
    nodes.push_back(plus);
  }
  REQUIRE(dev.execute({ts, nodes, 0}).is_ok());
  REQUIRE(dev.synchronize().is_ok());
  expect_close(
      a,
      [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        float v = input(i0, i1, i2, i3);
        for (int i = 0; i < single + batched; ++i) v = v * 2.0f + 1.0f;
        return v;
      },
      0.0f);
}

TEST_CASE("vulkan device: SWITCHYARD_VULKAN_PATH=portable turns the fast paths off", "[vulkan]") {
  struct Restore {
    std::string old;
    bool had;
    Restore() : had(std::getenv("SWITCHYARD_VULKAN_PATH") != nullptr) {
      if (had) old = std::getenv("SWITCHYARD_VULKAN_PATH");
    }
    ~Restore() {
      if (had)
        setenv("SWITCHYARD_VULKAN_PATH", old.c_str(), 1);
      else
        unsetenv("SWITCHYARD_VULKAN_PATH");
    }
  } restore;
  setenv("SWITCHYARD_VULKAN_PATH", "portable", 1);
  auto be = vulkan_or_skip();
  if (!be) return;
  const auto features = be->device(0).info().features;
  bool says_portable = false, lists_path = false;
  for (const auto& f : features) {
    says_portable |= f.find("portable only") != std::string::npos;
    lists_path |= f.rfind("path ", 0) == 0;
  }
  CHECK(says_portable);
  CHECK_FALSE(lists_path);
}

namespace {

// A buffer of no device: host memory only.
class HostOnlyBuffer final : public Buffer {
 public:
  explicit HostOnlyBuffer(size_t n) : mem_(n) {}
  size_t size() const noexcept override { return mem_.size(); }
  BufferKind kind() const noexcept override { return BufferKind::host_mapped; }
  Status upload(size_t, std::span<const std::byte>) noexcept override { return Status::ok(); }
  Status download(size_t, std::span<std::byte>) const noexcept override { return Status::ok(); }
  void* host_data() noexcept override { return mem_.data(); }

 private:
  std::vector<std::byte> mem_;
};

}  // namespace

TEST_CASE("vulkan device: memory it cannot address is refused with a reason", "[vulkan]") {
  auto be = vulkan_or_skip();
  if (!be) return;
  auto& dev = be->device(0);
  auto x = make(dev, StorageType::F32, kOdd, dense(StorageType::F32, kOdd));
  auto y = make(dev, StorageType::F32, kOdd, dense(StorageType::F32, kOdd));
  GraphNode node;
  node.op = OpKind::silu;
  node.dst = 0;
  node.src[0] = 1;

  // Another device's buffer: a second instance of the backend has its own Vulkan device.
  auto other = vulkan_or_skip();
  REQUIRE(other);
  auto foreign = make(other->device(0), StorageType::F32, kOdd, dense(StorageType::F32, kOdd));
  std::vector<GraphTensor> ts{y.t, foreign.t};
  auto st = dev.execute({ts, std::span<const GraphNode>(&node, 1), 0});
  CHECK(st.code() == StatusCode::invalid_argument);
  CHECK(st.message().find("another device") != std::string::npos);
  CHECK(dev.copy_to_device(*foreign.buf, 0, std::vector<std::byte>(4)).code() == StatusCode::invalid_argument);

  HostOnlyBuffer host(4096);
  ts[1].buffer = &host;
  CHECK(dev.execute({ts, std::span<const GraphNode>(&node, 1), 0}).code() == StatusCode::invalid_argument);
  ts[1].buffer = nullptr;
  ts[1].data = host.host_data();
  st = dev.execute({ts, std::span<const GraphNode>(&node, 1), 0});
  CHECK(st.message().find("host memory") != std::string::npos);

  // A staging buffer is for copies only.
  auto staged = make(dev, StorageType::F32, kOdd, dense(StorageType::F32, kOdd), BufferKind::staging);
  ts[1] = staged.t;
  CHECK(dev.execute({ts, std::span<const GraphNode>(&node, 1), 0}).code() == StatusCode::invalid_argument);
  // A tensor reaching past its buffer's end.
  ts[1] = x.t;
  ts[1].offset = x.bytes;
  CHECK(dev.execute({ts, std::span<const GraphNode>(&node, 1), 0}).code() == StatusCode::invalid_argument);
  REQUIRE(dev.synchronize().is_ok());
}

TEST_CASE("vulkan elementwise: activations and scale on strided tensors", "[vulkan]") {
  auto be = vulkan_or_skip();
  if (!be) return;
  auto& dev = be->device(0);
  const auto f32 = StorageType::F32;
  struct Case {
    OpKind op;
    float (*ref)(float, float);
    float rel;
    float abs = 1e-7f;
  };
  const Case cases[] = {
      {OpKind::silu, [](float v, float) { return v / (1.0f + std::exp(-v)); }, 1e-5f},
      {OpKind::sigmoid, [](float v, float) { return 1.0f / (1.0f + std::exp(-v)); }, 1e-5f},
      {OpKind::gelu,
       [](float v, float) {
         return 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
       },
       // The CPU's 1 + tanh(u) cancels for negative inputs: ~1e-7 absolute at |x| ~ 4.
       1e-5f, 1e-6f},
      {OpKind::softplus, [](float v, float) { return v > 20.f ? v : std::log1p(std::exp(v)); }, 1e-5f},
      {OpKind::scale, [](float v, float s) { return v * s; }, 0.0f},
  };
  for (const auto& c : cases) {
    INFO(op_name(c.op));
    // Source: elements two apart with gaps between rows; destination: dense but at an offset.
    auto x = make(dev, f32, kOdd, padded(f32, kOdd, 2, 5));
    auto y = make(dev, f32, kOdd, dense(f32, kOdd), BufferKind::host_mapped, 4);
    fill(x, input);
    const float s = -1.75f;
    REQUIRE(run_node(dev, c.op, {&y, &x}, {s, 0, 0, 0}).is_ok());
    expect_close(y, [&](int64_t a, int64_t b, int64_t cc, int64_t d) { return c.ref(input(a, b, cc, d), s); }, c.rel,
                 c.abs);
  }
  // The tails: large magnitudes must not turn into NaN.
  const Shape line{9, 1, 1, 1};
  const float tails[9] = {-100.f, -30.f, -20.f, -1e-3f, 0.f, 1e-3f, 20.f, 30.f, 100.f};
  for (auto op : {OpKind::silu, OpKind::gelu, OpKind::sigmoid, OpKind::softplus}) {
    INFO(op_name(op));
    auto x = make(dev, f32, line, dense(f32, line));
    auto y = make(dev, f32, line, dense(f32, line));
    fill(x, [&](int64_t i, int64_t, int64_t, int64_t) { return tails[i]; });
    REQUIRE(run_node(dev, op, {&y, &x}).is_ok());
    const auto img = image(y);
    for (int64_t i = 0; i < 9; ++i) CHECK(std::isfinite(value_at(y, img, i, 0, 0, 0)));
    if (op == OpKind::softplus) {
      // exp(-100) is below f32's normal range (a GPU may flush it); exp(-30) is not.
      CHECK(value_at(y, img, 1, 0, 0, 0) == Approx(std::log1p(std::exp(-30.f))).epsilon(1e-5));
      CHECK(value_at(y, img, 8, 0, 0, 0) == 100.f);
    }
  }
}

TEST_CASE("vulkan elementwise: add and mul broadcast b, swiglu", "[vulkan]") {
  auto be = vulkan_or_skip();
  if (!be) return;
  auto& dev = be->device(0);
  const auto f32 = StorageType::F32;
  const Shape bshapes[] = {kOdd, {7, 1, 3, 1}, {1, 5, 1, 2}, {1, 1, 1, 1}};
  for (auto op : {OpKind::add, OpKind::mul}) {
    for (const auto& bs : bshapes) {
      INFO(op_name(op) << " b [" << bs[0] << "," << bs[1] << "," << bs[2] << "," << bs[3] << "]");
      auto a = make(dev, f32, kOdd, padded(f32, kOdd, 1, 2));
      auto b = make(dev, f32, bs, padded(f32, bs, 3, 1));
      auto y = make(dev, f32, kOdd, padded(f32, kOdd, 2, 0));
      fill(a, input);
      fill(b, [](int64_t i0, int64_t i1, int64_t i2, int64_t i3) { return input(i3, i2, i1, i0) + 0.25f; });
      REQUIRE(run_node(dev, op, {&y, &a, &b}).is_ok());
      expect_close(
          y,
          [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
            const float av = input(i0, i1, i2, i3);
            const float bv = input(bs[3] == 1 ? 0 : i3, bs[2] == 1 ? 0 : i2, bs[1] == 1 ? 0 : i1, bs[0] == 1 ? 0 : i0) +
                             0.25f;
            return op == OpKind::add ? av + bv : av * bv;
          },
          0.0f);
    }
  }
  // b may not have a size other than a's or 1.
  {
    auto a = make(dev, f32, kOdd, dense(f32, kOdd));
    auto b = make(dev, f32, Shape{7, 2, 3, 2}, dense(f32, Shape{7, 2, 3, 2}));
    auto y = make(dev, f32, kOdd, dense(f32, kOdd));
    CHECK(run_node(dev, OpKind::add, {&y, &a, &b}).code() == StatusCode::unsupported);
  }
  // swiglu with a transposed gate (dims 0 and 1 swap strides).
  auto gate = make(dev, f32, kOdd, Shape{4 * 5, 4, 4 * 35, 4 * 105});
  auto up = make(dev, f32, kOdd, padded(f32, kOdd, 1, 1));
  auto y = make(dev, f32, kOdd, dense(f32, kOdd));
  fill(gate, input);
  fill(up, [](int64_t i0, int64_t i1, int64_t i2, int64_t i3) { return input(i1, i0, i3, i2) * 0.5f; });
  REQUIRE(run_node(dev, OpKind::swiglu, {&y, &gate, &up}).is_ok());
  expect_close(
      y,
      [](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        const float g = input(i0, i1, i2, i3);
        return g / (1.0f + std::exp(-g)) * (input(i1, i0, i3, i2) * 0.5f);
      },
      1e-5f, 1e-7f);
}

TEST_CASE("vulkan elementwise: copy reorders and converts f32, f16 and bf16", "[vulkan]") {
  auto be = vulkan_or_skip();
  if (!be) return;
  auto& dev = be->device(0);
  const auto f32 = StorageType::F32, f16 = StorageType::F16, bf16 = StorageType::BF16;
  // Row-major element k of the source becomes element k of the destination.
  auto flat = [](const Shape& ne, int64_t k) {
    return std::array<int64_t, 4>{k % ne[0], (k / ne[0]) % ne[1], (k / (ne[0] * ne[1])) % ne[2],
                                  k / (ne[0] * ne[1] * ne[2])};
  };
  const Shape out{15, 14, 1, 1};  // 210 elements, like kOdd, another shape
  struct Case {
    StorageType from, to;
  };
  // The f32 side may have any strides; a converted side is dense (the CPU packs it).
  auto nb_of = [&](StorageType type, const Shape& ne, bool src) {
    if (type != f32) return dense(type, ne);
    return src ? padded(type, ne, 3, 2) : padded(type, ne, 2, 1);
  };
  // Thirds, so f16 and bf16 round (some values to ties of bf16 when scaled by 2^k).
  auto value = [](int64_t i0, int64_t i1, int64_t i2, int64_t i3) { return input(i0, i1, i2, i3) / 3.0f + 1e-3f * i0; };
  for (const auto& c : {Case{f32, f32}, Case{f32, f16}, Case{f16, f32}, Case{f32, bf16}, Case{bf16, f32}}) {
    INFO(storage_type_name(c.from) << " -> " << storage_type_name(c.to));
    auto x = make(dev, c.from, kOdd, nb_of(c.from, kOdd, true));
    auto y = make(dev, c.to, out, nb_of(c.to, out, false));
    fill(x, value);
    REQUIRE(run_node(dev, OpKind::copy, {&y, &x}).is_ok());
    expect_close(
        y,
        [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
          const int64_t k = i0 + out[0] * (i1 + out[1] * (i2 + out[2] * i3));
          const auto s = flat(kOdd, k);
          float v = value(s[0], s[1], s[2], s[3]);
          if (c.from == f16 || c.to == f16) v = fp16_to_fp32(fp32_to_fp16(v));
          if (c.from == bf16 || c.to == bf16) v = bf16_to_fp32(fp32_to_bf16(v));
          return v;
        },
        0.0f);
  }
  // f32 -> bf16 rounds as the SDK does: ties to even, NaN stays NaN.
  {
    const Shape line{6, 1, 1, 1};
    const uint32_t bits[6] = {0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0xbf807fffu, 0x7fc00001u, 0x7f800000u};
    auto x = make(dev, f32, line, dense(f32, line));
    auto y = make(dev, bf16, line, dense(bf16, line));
    fill(x, [&](int64_t i, int64_t, int64_t, int64_t) {
      float f;
      std::memcpy(&f, &bits[i], 4);
      return f;
    });
    REQUIRE(run_node(dev, OpKind::copy, {&y, &x}).is_ok());
    const auto img = image(y);
    for (int64_t i = 0; i < 6; ++i) {
      float f;
      std::memcpy(&f, &bits[i], 4);
      uint16_t got;
      std::memcpy(&got, &img[y.pos(i, 0, 0, 0)], 2);
      CHECK(got == fp32_to_bf16(f));
    }
  }
  // Types it has no kernel for are refused, so the node runs elsewhere.
  {
    auto x = make(dev, f16, kOdd, dense(f16, kOdd));
    auto y = make(dev, f16, kOdd, dense(f16, kOdd));
    CHECK(run_node(dev, OpKind::copy, {&y, &x}).code() == StatusCode::unsupported);
  }
  // A strided converted side: the CPU would ignore its strides, so it is refused.
  {
    auto x = make(dev, f16, kOdd, padded(f16, kOdd, 1, 2));
    auto y = make(dev, f32, kOdd, dense(f32, kOdd));
    CHECK(run_node(dev, OpKind::copy, {&y, &x}).code() == StatusCode::unsupported);
  }
}

namespace {

// A dense tensor of a block type (rows of whole blocks) holding `bytes` (at most its size)
// after `offset`.
DevTensor make_packed(Device& dev, StorageType type, const Shape& ne, std::span<const std::byte> bytes, size_t offset = 6) {
  DevTensor d;
  d.t.type = type;
  const auto row = static_cast<int64_t>(storage_row_bytes(type, static_cast<uint64_t>(ne[0])).value());
  d.t.nb[0] = static_cast<int64_t>(storage_type_info(type).block_bytes);
  for (int k = 0; k < 4; ++k) d.t.ne[k] = ne[k];
  d.t.nb[1] = row;
  d.t.nb[2] = row * ne[1];
  d.t.nb[3] = row * ne[1] * ne[2];
  d.t.offset = offset;
  d.bytes = offset + static_cast<size_t>(row * ne[1] * ne[2] * ne[3]) + 8;
  auto b = dev.allocate(d.bytes, BufferKind::device_local);
  REQUIRE(b.has_value());
  d.buf = std::move(b.value());
  d.t.buffer = d.buf.get();
  std::vector<std::byte> img(d.bytes, std::byte{0x5c});
  REQUIRE(offset + bytes.size() <= d.bytes);
  std::copy(bytes.begin(), bytes.end(), img.begin() + static_cast<std::ptrdiff_t>(offset));
  REQUIRE(d.buf->upload(0, img).is_ok());
  return d;
}

}  // namespace

TEST_CASE("vulkan elementwise: copy to and from Q8_0 and Q4_0 gives the SDK's bytes and values", "[vulkan]") {
  auto be = vulkan_or_skip();
  if (!be) return;
  auto& dev = be->device(0);
  const auto f32 = StorageType::F32;
  const Shape xs{64, 3, 2, 1};   // six rows of two blocks each
  const Shape qs{128, 3, 1, 1};  // the same 384 elements, another shape
  // Blocks the scale search treats specially: all zero, one nonzero, constant, and ranges
  // wide and narrow.
  auto value = [](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const int64_t k = i0 + 64 * (i1 + 3 * i2), blk = k / 32;
    if (blk == 0) return 0.0f;
    if (blk == 1) return k == 37 ? -2.5f : 0.0f;
    if (blk == 2) return 0.7f;
    return input(i0, i1, i2, i3) * 0.01f * static_cast<float>(blk * blk) + 1e-4f * static_cast<float>(i0);
  };
  // The reference: the f32 source's rows, packed, through the SDK's quantize_row.
  std::vector<float> rows;
  for (int64_t i3 = 0; i3 < xs[3]; ++i3)
    for (int64_t i2 = 0; i2 < xs[2]; ++i2)
      for (int64_t i1 = 0; i1 < xs[1]; ++i1)
        for (int64_t i0 = 0; i0 < xs[0]; ++i0) rows.push_back(value(i0, i1, i2, i3));
  for (auto type : {StorageType::Q8_0, StorageType::Q4_0}) {
    INFO(storage_type_name(type));
    const auto row_bytes = storage_row_bytes(type, static_cast<uint64_t>(xs[0])).value();
    std::vector<std::byte> want(row_bytes * rows.size() / static_cast<size_t>(xs[0]));
    for (size_t r = 0; r * static_cast<size_t>(xs[0]) < rows.size(); ++r)
      REQUIRE(quantize_row(type, rows.data() + r * static_cast<size_t>(xs[0]), want.data() + r * row_bytes, xs[0]).is_ok());

    // f32 (strided) -> quantized: the same bytes.
    {
      auto x = make(dev, f32, xs, padded(f32, xs, 2, 3));
      fill(x, value);
      auto y = make_packed(dev, type, qs, std::vector<std::byte>(want.size(), std::byte{0}));
      REQUIRE(run_node(dev, OpKind::copy, {&y, &x}).is_ok());
      const auto img = image(y);
      const std::vector<std::byte> got(img.begin() + static_cast<std::ptrdiff_t>(y.t.offset),
                                       img.begin() + static_cast<std::ptrdiff_t>(y.t.offset + want.size()));
      CHECK(got == want);
    }
    // quantized -> f32 (strided): the SDK's dequantized values, exactly.
    {
      std::vector<float> deq(rows.size());
      REQUIRE(dequantize_row(type, want.data(), deq.data(), static_cast<int64_t>(deq.size())).is_ok());
      auto x = make_packed(dev, type, qs, want);
      auto y = make(dev, f32, xs, padded(f32, xs, 3, 1));
      REQUIRE(run_node(dev, OpKind::copy, {&y, &x}).is_ok());
      expect_close(
          y, [&](int64_t i0, int64_t i1, int64_t i2, int64_t) { return deq[static_cast<size_t>(i0 + 64 * (i1 + 3 * i2))]; },
          0.0f);
    }
    // Refused: rows of the f32 side that are not whole blocks, a quantized side that is
    // not dense, and quantized to quantized.
    {
      auto x = make(dev, f32, Shape{48, 2, 1, 1}, dense(f32, Shape{48, 2, 1, 1}));
      auto y = make_packed(dev, type, Shape{32, 3, 1, 1}, {});
      CHECK(run_node(dev, OpKind::copy, {&y, &x}).code() == StatusCode::unsupported);
      auto gap = make_packed(dev, type, qs, want);
      gap.t.nb[2] += 2;
      gap.t.ne[2] = 2;
      gap.t.ne[1] = 1;
      auto x2 = make(dev, f32, Shape{128, 2, 1, 1}, dense(f32, Shape{128, 2, 1, 1}));
      CHECK(run_node(dev, OpKind::copy, {&gap, &x2}).code() == StatusCode::unsupported);
      auto other = make_packed(dev, type == StorageType::Q8_0 ? StorageType::Q4_0 : StorageType::Q8_0, qs, {});
      auto src = make_packed(dev, type, qs, want);
      CHECK(run_node(dev, OpKind::copy, {&other, &src}).code() == StatusCode::unsupported);
    }
  }
}
