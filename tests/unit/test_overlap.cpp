// Host and device work overlap (issue 20): the order nodes are queued in keeps every
// dependency and puts device work the host does not feed ahead of host work, and the host
// waits for the queued work that made its inputs, not for the device's whole queue.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <deque>
#include <functional>

#include "graph/order.hpp"
#include "graph/scheduler.hpp"
#include "registry/registry.hpp"

using namespace sy;

namespace overlap_test {

// Device 0 queues work (a GPU), device 1 is the host.
constexpr uint8_t kQueues[] = {1, 0};

GraphTensor f32(int64_t n) {
  GraphTensor t;
  t.ne[0] = n;
  graph::set_contiguous_strides(t);
  return t;
}

std::vector<size_t> positions(const graph::Graph& g, const std::vector<GraphNode>& ordered) {
  // Where each of g's nodes ended up (nodes are told apart by their destination).
  std::vector<size_t> at;
  for (const GraphNode& n : g.nodes())
    for (size_t i = 0; i < ordered.size(); ++i)
      if (ordered[i].dst == n.dst) at.push_back(i);
  return at;
}

// Memory the host cannot address, and a queue that runs only when waited for: a GPU whose
// kernels are slow, so whatever the host does meanwhile overlaps them. It multiplies f32
// vectors and refuses everything else.
class QueueBuffer final : public Buffer {
 public:
  explicit QueueBuffer(size_t n) : mem(n) {}
  size_t size() const noexcept override { return mem.size(); }
  Status upload(size_t off, std::span<const std::byte> src) noexcept override {
    std::memcpy(mem.data() + off, src.data(), src.size());
    return Status::ok();
  }
  Status download(size_t off, std::span<std::byte> dst) const noexcept override {
    std::memcpy(dst.data(), mem.data() + off, dst.size());
    return Status::ok();
  }
  std::vector<std::byte> mem;
};

class QueueDevice final : public Device {
 public:
  DeviceInfo info() const noexcept override {
    DeviceInfo d;
    d.name = "queue0";
    return d;
  }
  Result<std::unique_ptr<Buffer>> allocate(size_t n, BufferKind) noexcept override {
    return std::unique_ptr<Buffer>(std::make_unique<QueueBuffer>(n));
  }
  Support supports(const GraphNode& n, std::span<const GraphTensor>) const noexcept override {
    return n.op == OpKind::mul ? Support::yes : Support::no;
  }
  Status execute(const SubGraph& g) noexcept override {
    for (const GraphNode& n : g.nodes) {
      auto at = [&](int32_t t) {
        const GraphTensor& x = g.tensors[static_cast<size_t>(t)];
        return reinterpret_cast<float*>(static_cast<QueueBuffer*>(x.buffer)->mem.data() + x.offset);
      };
      const int64_t count = g.tensors[static_cast<size_t>(n.dst)].elements();
      float* y = at(n.dst);
      const float* a = at(n.src[0]);
      const float* b = at(n.src[1]);
      queue_.push_back([=] {
        for (int64_t i = 0; i < count; ++i) y[i] = a[i] * b[i];
      });
    }
    log.push_back("execute");
    return Status::ok();
  }
  Status copy_to_host(Buffer& src, size_t off, std::span<std::byte> dst) noexcept override {
    const std::byte* from = static_cast<QueueBuffer&>(src).mem.data() + off;
    queue_.push_back([=] { std::memcpy(dst.data(), from, dst.size()); });
    log.push_back("copy_to_host");
    return Status::ok();
  }
  uint64_t record_event() noexcept override { return done_ + queue_.size(); }
  Status wait_event(uint64_t e) noexcept override {
    while (done_ < e) run_one();
    log.push_back("wait_event, " + std::to_string(queue_.size()) + " still queued");
    return Status::ok();
  }
  Status synchronize() noexcept override {
    while (!queue_.empty()) run_one();
    log.push_back("synchronize");
    return Status::ok();
  }
  std::vector<std::string> log;

 private:
  void run_one() {
    queue_.front()();
    queue_.pop_front();
    ++done_;
  }
  std::deque<std::function<void()>> queue_;
  uint64_t done_ = 0;
};

}  // namespace overlap_test

using namespace overlap_test;

TEST_CASE("overlap order: device work the host does not feed goes first, dependencies kept", "[engine][overlap]") {
  graph::Graph g;
  float in[4] = {1, 2, 3, 4};
  const auto x = g.input(StorageType::F32, in, 4);
  const auto a = g.unary(OpKind::silu, x);      // 0: device
  const auto h = g.unary(OpKind::sigmoid, a);   // 1: host, reads a
  const auto b = g.unary(OpKind::gelu, x);      // 2: device, independent: moves up
  const auto c = g.binary(OpKind::add, h, b);   // 3: device, needs the host's h
  g.op(OpKind::scale, g.reshape(a, 4), {x}, {}, {2.0f});  // 4: device, rewrites a after the host read it
  const auto d = g.unary(OpKind::silu, a);      // 5: host, reads the new a
  (void)c, (void)d;
  std::vector<GraphNode> nodes = g.nodes();
  std::vector<int> device{0, 1, 0, 0, 0, 1};
  graph::OverlapOrder order;
  REQUIRE(order.apply(g, nodes, device, kQueues));
  const auto at = positions(g, nodes);
  CHECK(at[2] < at[1]);  // independent device work before the host's
  CHECK(at[0] < at[1]);  // read after write
  CHECK(at[1] < at[3]);
  CHECK(at[1] < at[4]);  // write after read: the rewrite waits for the host's read
  CHECK(at[4] < at[5]);
  // The device arrays moved with the nodes.
  for (size_t i = 0; i < 6; ++i) CHECK(device[at[i]] == std::vector<int>{0, 1, 0, 0, 0, 1}[i]);
}

TEST_CASE("overlap order: one kind of device keeps the graph's order", "[engine][overlap]") {
  graph::Graph g;
  float in[4] = {1, 2, 3, 4};
  const auto x = g.input(StorageType::F32, in, 4);
  g.unary(OpKind::sigmoid, g.unary(OpKind::silu, x));
  g.unary(OpKind::gelu, x);
  std::vector<GraphNode> nodes = g.nodes();
  std::vector<int> host{1, 1, 1}, gpu{0, 0, 0};
  graph::OverlapOrder order;
  CHECK_FALSE(order.apply(g, nodes, host, kQueues));
  CHECK_FALSE(order.apply(g, nodes, gpu, kQueues));
  CHECK(positions(g, nodes) == std::vector<size_t>{0, 1, 2});
}

TEST_CASE("overlap order: tensors of one cache allocation are one resource", "[engine][overlap]") {
  graph::Graph g;
  float in[4] = {1, 2, 3, 4};
  std::byte cache[64]{};
  GraphTensor k = f32(4), v = f32(4);
  k.data = cache;
  v.data = cache;  // an MLA V looking into the K cache
  const auto x = g.input(StorageType::F32, in, 4);
  const auto kc = g.persistent(k, 1), vc = g.persistent(v, 0);
  g.op(OpKind::copy, kc, {x});                  // 0: host writes the cache
  g.unary(OpKind::silu, vc);                    // 1: device reads it through another tensor
  std::vector<GraphNode> nodes = g.nodes();
  std::vector<int> device{1, 0};
  graph::OverlapOrder order;
  CHECK_FALSE(order.apply(g, nodes, device, kQueues));
  // A weight nobody writes orders nothing: the device's read of it may go first.
  graph::Graph w;
  GraphTensor wt = f32(4);
  wt.data = cache;
  const auto wx = w.input(StorageType::F32, in, 4);
  w.unary(OpKind::silu, wx);                    // 0: host
  w.binary(OpKind::mul, wx, w.persistent(wt, 0));  // 1: device
  nodes = w.nodes();
  device = {1, 0};
  CHECK(order.apply(w, nodes, device, kQueues));
  CHECK(positions(w, nodes) == std::vector<size_t>{1, 0});
}

TEST_CASE("overlap: the host runs while device work it does not need is still queued", "[engine][overlap]") {
  static registry::Registry reg(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  auto cpu = reg.create_backend("cpu", {});
  REQUIRE(cpu.has_value());
  QueueDevice gpu;
  graph::Scheduler s({&gpu, &(*cpu)->device(0)}, false);
  const std::vector<float> in{-2, -1, 0, 1, 2, 3, 4, 5};
  auto wbuf = gpu.allocate(8 * sizeof(float), BufferKind::device_local);
  REQUIRE(wbuf.has_value());
  const std::vector<float> threes(8, 3.0f);
  REQUIRE((*wbuf)->upload(0, std::as_bytes(std::span(threes))).is_ok());
  GraphTensor w = f32(8);
  w.buffer = wbuf->get();
  for (int step = 0; step < 2; ++step) {
    gpu.log.clear();
    graph::Graph g;
    const auto x = g.input(StorageType::F32, in.data(), 8);
    // As a MoE layer with experts in RAM: the device makes the experts' input (a), the
    // host computes from it (the routed experts, h), the device computes from a what the
    // host does not need (the shared expert, b then c), and the host joins both (d).
    const auto wt = g.persistent(w, 0);
    const auto a = g.binary(OpKind::mul, g.copy(x), wt);  // the copy of x runs on the host
    const auto h = g.unary(OpKind::sigmoid, a);
    const auto b = g.binary(OpKind::mul, a, wt);
    const auto c = g.binary(OpKind::mul, b, wt);
    const auto d = g.binary(OpKind::add, h, c);
    g.mark_output(d);
    REQUIRE(s.run(g).is_ok());
    const auto* out = static_cast<const float*>(g.tensor_at(d).data);
    REQUIRE(out != nullptr);
    for (size_t i = 0; i < 8; ++i) {
      const double av = 3.0 * in[i];
      CHECK(out[i] == Approx(1.0 / (1.0 + std::exp(-av)) + 9.0 * av).epsilon(1e-6));
    }
    // The shared expert's two products were queued before the host's first wait, which
    // left them queued: they ran beside the host's sigmoid.
    const std::vector<std::string> want{"execute",      "copy_to_host", "execute", "copy_to_host",
                                        "wait_event, 3 still queued", "wait_event, 0 still queued", "synchronize"};
    CHECK(gpu.log == want);
  }
}
