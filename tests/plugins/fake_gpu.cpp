// A fake GPU for tests: backend "fake", one device "fake0" with the shape of a discrete GPU
// and none of its hardware. What makes it useful is what it refuses to do for a careless
// caller:
// - device_local memory is private (host_data() is null, reads_host_memory and
//   unified_memory are false), and a kernel given host memory or another device's buffer
//   fails with an error naming the tensor, where a real GPU would fault or read garbage;
// - execute() and copy_to_*() only queue closures; they run at wait_event() or
//   synchronize() (or a synchronous upload()/download()), so whoever reads a result without
//   waiting reads stale bytes;
// - it runs a handful of F32 ops on contiguous tensors (add, mul, scale, silu, rms_norm,
//   copy) and says no to everything else, so the scheduler's fallbacks get exercised.
// SWITCHYARD_FAKE_FAULT (read when the backend is created) breaks it on purpose, so tests can
// check that the conformance suite notices: "scale" multiplies by a factor 0.1% off,
// "early-read" makes copy_to_host read at once instead of in queue order.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/backend.hpp"
#include "switchyard/params.hpp"
#include "switchyard/plugin.hpp"

namespace sy::fake {
namespace {

constexpr uint64_t kMemory = uint64_t{8} << 30;  // what the device claims to have (it allocates only what is used)

// A buffer's bytes, shared with the closures queued on them so a buffer freed too early
// does not become a dangling read in the fake itself.
struct Memory {
  std::vector<std::byte> bytes;
};

class FakeDevice;

class FakeBuffer final : public Buffer {
 public:
  FakeBuffer(FakeDevice& dev, size_t bytes, BufferKind kind)
      : dev_(dev), kind_(kind), mem_(std::make_shared<Memory>(Memory{std::vector<std::byte>(bytes)})) {}
  size_t size() const noexcept override { return mem_->bytes.size(); }
  BufferKind kind() const noexcept override { return kind_; }
  Status upload(size_t offset, std::span<const std::byte> src) noexcept override;
  Status download(size_t offset, std::span<std::byte> dst) const noexcept override;
  void* host_data() noexcept override { return kind_ == BufferKind::device_local ? nullptr : mem_->bytes.data(); }

  [[nodiscard]] const FakeDevice& device() const { return dev_; }
  [[nodiscard]] const std::shared_ptr<Memory>& memory() const { return mem_; }

 private:
  FakeDevice& dev_;
  BufferKind kind_;
  std::shared_ptr<Memory> mem_;
};

bool f32_contiguous(const GraphTensor& t) {
  if (t.type != StorageType::F32) return false;
  int64_t expect = 4;
  for (int d = 0; d < 4; ++d) {
    if (t.ne[d] > 1 && t.nb[d] != expect) return false;
    expect *= t.ne[d];
  }
  return true;
}

bool same_shape(const GraphTensor& a, const GraphTensor& b) {
  for (int d = 0; d < 4; ++d)
    if (a.ne[d] != b.ne[d]) return false;
  return true;
}

int sources(const GraphNode& n) {
  int s = 0;
  while (s < kMaxSources && n.src[s] >= 0) ++s;
  return s;
}

Support answer(const GraphNode& n, std::span<const GraphTensor> t) {
  auto at = [&](int32_t i) -> const GraphTensor* {
    return i >= 0 && static_cast<size_t>(i) < t.size() ? &t[static_cast<size_t>(i)] : nullptr;
  };
  const GraphTensor* y = at(n.dst);
  const GraphTensor* a = at(n.src[0]);
  if (!y || !a || !f32_contiguous(*y) || !f32_contiguous(*a)) return Support::no;
  switch (n.op) {
    case OpKind::add:
    case OpKind::mul: {
      const GraphTensor* b = at(n.src[1]);
      if (sources(n) != 2 || !b || !f32_contiguous(*b) || !same_shape(*a, *y)) return Support::no;
      for (int d = 0; d < 4; ++d)
        if (b->ne[d] != a->ne[d] && b->ne[d] != 1) return Support::no;
      return Support::yes;
    }
    case OpKind::scale:
    case OpKind::silu:
    case OpKind::rms_norm: return sources(n) == 1 && same_shape(*a, *y) ? Support::yes : Support::no;
    case OpKind::copy: return sources(n) == 1 && a->elements() == y->elements() ? Support::yes : Support::no;
    default: return Support::no;
  }
}

// One node on resolved memory (`p[i]` is tensor i's first element).
void run_node(const GraphNode& n, const std::vector<GraphTensor>& t, const std::vector<float*>& p, float scale_fault) {
  const GraphTensor& y = t[static_cast<size_t>(n.dst)];
  const GraphTensor& a = t[static_cast<size_t>(n.src[0])];
  float* out = p[static_cast<size_t>(n.dst)];
  const float* x = p[static_cast<size_t>(n.src[0])];
  const int64_t count = y.elements();
  switch (n.op) {
    case OpKind::add:
    case OpKind::mul: {
      const GraphTensor& b = t[static_cast<size_t>(n.src[1])];
      const float* z = p[static_cast<size_t>(n.src[1])];
      for (int64_t i = 0; i < count; ++i) {
        int64_t rest = i, bi = 0, bstride = 1;
        for (int d = 0; d < 4; ++d) {
          const int64_t c = rest % a.ne[d];
          rest /= a.ne[d];
          bi += (b.ne[d] == 1 ? 0 : c) * bstride;
          bstride *= b.ne[d];
        }
        out[i] = n.op == OpKind::add ? x[i] + z[bi] : x[i] * z[bi];
      }
      return;
    }
    case OpKind::scale:
      for (int64_t i = 0; i < count; ++i) out[i] = x[i] * n.f[0] * scale_fault;
      return;
    case OpKind::silu:
      for (int64_t i = 0; i < count; ++i) out[i] = x[i] / (1.0f + std::exp(-x[i]));
      return;
    case OpKind::rms_norm:
      for (int64_t r = 0; r < a.rows(); ++r) {
        const float* xr = x + r * a.ne[0];
        double ss = 0;
        for (int64_t i = 0; i < a.ne[0]; ++i) ss += static_cast<double>(xr[i]) * xr[i];
        const auto s = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(a.ne[0]) + n.f[0]));
        for (int64_t i = 0; i < a.ne[0]; ++i) out[r * a.ne[0] + i] = xr[i] * s;
      }
      return;
    case OpKind::copy: std::memmove(out, x, static_cast<size_t>(count) * 4); return;
    default: return;  // execute() refused it already
  }
}

struct Faults {
  bool scale = false, early_read = false;
};

Faults faults_from_env() {
  Faults f;
  if (const char* v = std::getenv("SWITCHYARD_FAKE_FAULT")) {
    f.scale = std::strcmp(v, "scale") == 0;
    f.early_read = std::strcmp(v, "early-read") == 0;
  }
  return f;
}

class FakeDevice final : public Device {
 public:
  FakeDevice() : faults_(faults_from_env()) {}

  DeviceInfo info() const noexcept override {
    DeviceInfo d;
    d.name = "fake0";
    d.description = "Switchyard test GPU (private memory, deferred execution)";
    d.kind = DeviceKind::discrete_gpu;
    d.total_memory = kMemory;
    d.free_memory = kMemory;
    d.reads_host_memory = false;
    d.unified_memory = false;
    d.features = {"deferred execution", "ops: add mul scale silu rms_norm copy (F32, contiguous)"};
    return d;
  }

  Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferKind kind) noexcept override {
    try {
      return std::unique_ptr<Buffer>(std::make_unique<FakeBuffer>(*this, bytes, kind));
    } catch (const std::bad_alloc&) {
      return error::out_of_memory("fake: cannot allocate " + std::to_string(bytes) + " bytes");
    }
  }

  Support supports(const GraphNode& node, std::span<const GraphTensor> tensors) const noexcept override {
    return answer(node, tensors);
  }

  Status execute(const SubGraph& g) noexcept override {
    try {
      std::vector<GraphTensor> tensors(g.tensors.begin(), g.tensors.end());
      std::vector<GraphNode> nodes(g.nodes.begin(), g.nodes.end());
      std::map<int32_t, std::shared_ptr<Memory>> memory;  // tensor index -> the bytes it lives in
      for (const GraphNode& n : nodes) {
        if (answer(n, tensors) == Support::no)
          return error::unsupported("fake: was given " + std::string(op_name(n.op)) + ", which it said it cannot run");
        for (int s = -1; s < sources(n); ++s) {
          const int32_t i = s < 0 ? n.dst : n.src[s];
          auto m = resolve(tensors[static_cast<size_t>(i)], n, s);
          if (!m) return m.status();
          memory[i] = *m;
        }
      }
      const float scale_fault = faults_.scale ? 1.001f : 1.0f;
      enqueue([tensors = std::move(tensors), nodes = std::move(nodes), memory = std::move(memory), scale_fault]() -> Status {
        std::vector<float*> p(tensors.size(), nullptr);
        for (const auto& [i, m] : memory)
          p[static_cast<size_t>(i)] = reinterpret_cast<float*>(m->bytes.data() + tensors[static_cast<size_t>(i)].offset);
        for (const GraphNode& n : nodes) run_node(n, tensors, p, scale_fault);
        return Status::ok();
      });
      return Status::ok();
    } catch (const std::bad_alloc&) {
      return error::out_of_memory("fake: out of memory queueing a sub-graph");
    }
  }

  Status copy_to_device(Buffer& dst, size_t offset, std::span<const std::byte> src) noexcept override {
    auto m = own(dst, offset, src.size(), "copy_to_device");
    if (!m) return m.status();
    try {
      // The source is read now, as the contract says; the bytes land when the queue runs.
      enqueue([m = *m, offset, bytes = std::vector<std::byte>(src.begin(), src.end())]() -> Status {
        std::memcpy(m->bytes.data() + offset, bytes.data(), bytes.size());
        return Status::ok();
      });
      return Status::ok();
    } catch (const std::bad_alloc&) {
      return error::out_of_memory("fake: out of memory queueing a copy");
    }
  }

  Status copy_to_host(Buffer& src, size_t offset, std::span<std::byte> dst) noexcept override {
    auto m = own(src, offset, dst.size(), "copy_to_host");
    if (!m) return m.status();
    if (faults_.early_read) {
      std::memcpy(dst.data(), (*m)->bytes.data() + offset, dst.size());
      return Status::ok();
    }
    try {
      enqueue([m = *m, offset, dst]() -> Status {
        std::memcpy(dst.data(), m->bytes.data() + offset, dst.size());
        return Status::ok();
      });
      return Status::ok();
    } catch (const std::bad_alloc&) {
      return error::out_of_memory("fake: out of memory queueing a copy");
    }
  }

  uint64_t record_event() noexcept override { return last_; }

  Status wait_event(uint64_t event) noexcept override {
    if (event > last_) return error::invalid_argument("fake: event " + std::to_string(event) + " was never recorded");
    return drain(event);
  }

  Status synchronize() noexcept override { return drain(last_); }

  /// Runs queued work up to and including operation `upto`; the first failure is returned.
  Status drain(uint64_t upto) noexcept {
    Status first;
    while (!queue_.empty() && queue_.front().first <= upto) {
      auto op = std::move(queue_.front().second);
      queue_.pop_front();
      if (auto st = op(); !st && first) first = st;
    }
    return first;
  }

 private:
  void enqueue(std::function<Status()> fn) { queue_.emplace_back(++last_, std::move(fn)); }

  // The bytes of a buffer of this device, checked against the range used.
  Result<std::shared_ptr<Memory>> own(Buffer& b, size_t offset, size_t bytes, const char* what) const {
    auto* fb = dynamic_cast<FakeBuffer*>(&b);
    if (!fb || &fb->device() != this) return error::invalid_argument(std::string("fake: ") + what + ": not a buffer of fake0");
    if (offset > fb->size() || bytes > fb->size() - offset)
      return error::invalid_argument(std::string("fake: ") + what + ": " + std::to_string(bytes) + " bytes at " +
                                 std::to_string(offset) + " run past the buffer's " + std::to_string(fb->size()));
    return fb->memory();
  }

  // Where a node's tensor lives; s is the source index, -1 for the destination.
  Result<std::shared_ptr<Memory>> resolve(const GraphTensor& t, const GraphNode& n, int s) const {
    const std::string which = std::string(op_name(n.op)) + (s < 0 ? " destination" : " source " + std::to_string(s));
    if (!t.buffer)
      return error::invalid_argument("fake: the " + which +
                                     " is host memory, which this device cannot read (reads_host_memory is false)");
    auto* fb = dynamic_cast<FakeBuffer*>(t.buffer);
    if (!fb || &fb->device() != this) return error::invalid_argument("fake: the " + which + " is in another device's buffer");
    if (fb->kind() == BufferKind::staging)
      return error::invalid_argument("fake: the " + which + " is in a staging buffer, which kernels never touch");
    const auto extent = static_cast<size_t>(t.nb[3] * t.ne[3]);
    if (t.offset > fb->size() || extent > fb->size() - t.offset)
      return error::invalid_argument("fake: the " + which + " runs past the end of its buffer");
    return fb->memory();
  }

  Faults faults_;
  std::deque<std::pair<uint64_t, std::function<Status()>>> queue_;
  uint64_t last_ = 0;  // number of the last queued operation
};

// Synchronous access waits for the device's queue first, as the contract says.
Status FakeBuffer::upload(size_t offset, std::span<const std::byte> src) noexcept {
  if (auto st = dev_.synchronize(); !st) return st;
  if (offset > size() || src.size() > size() - offset) return error::invalid_argument("fake: upload past the buffer's end");
  std::memcpy(mem_->bytes.data() + offset, src.data(), src.size());
  return Status::ok();
}

Status FakeBuffer::download(size_t offset, std::span<std::byte> dst) const noexcept {
  if (auto st = dev_.synchronize(); !st) return st;
  if (offset > size() || dst.size() > size() - offset) return error::invalid_argument("fake: download past the buffer's end");
  std::memcpy(dst.data(), mem_->bytes.data() + offset, dst.size());
  return Status::ok();
}

class FakeBackend final : public Backend {
 public:
  size_t device_count() const noexcept override { return 1; }
  Device& device(size_t) noexcept override { return device_; }

 private:
  FakeDevice device_;
};

Result<std::unique_ptr<Component>> make_fake(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    if (auto chosen = select_devices(p, 1, "fake"); !chosen) return chosen.status();
    return std::make_unique<FakeBackend>();
  });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "test-fake-gpu";
    pd.version = "1.0.0";
    pd.summary = "A fake GPU for tests: private memory, deferred execution, six F32 ops";
    ComponentDesc c;
    c.kind = ComponentKind::backend;
    c.name = "fake";
    c.version = "1.0.0";
    c.rank = 1;  // never chosen over a real backend
    c.summary = "fake0: private memory, work runs only when waited for";
    c.factory = make_fake;
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::fake

SWITCHYARD_PLUGIN(sy::fake::describe)
