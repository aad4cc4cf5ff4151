// The fake GPU (tests/plugins/fake_gpu.cpp) holds the device contract's two meanings that
// a CPU-only build never exercises: who may read which buffer kind in place, and that queued
// work is done only once it is waited for. Other tests rely on both, so they are pinned here.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "registry/registry.hpp"

using namespace sy;

namespace {

registry::Owned<Backend> fake_backend() {
  static registry::Registry reg(std::vector<registry::SearchDir>{{SY_TEST_PLUGIN_DIR "/fake", "test"}});
  auto be = reg.create_backend("fake", ParamMap{});
  REQUIRE(be.has_value());
  return std::move(*be);
}

std::vector<std::byte> bytes_of(const std::vector<float>& v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> floats_at(void* p, size_t n) {
  std::vector<float> v(n);
  std::memcpy(v.data(), p, n * 4);
  return v;
}

GraphTensor f32(Buffer& b, int64_t n) {
  GraphTensor t;
  t.ne[0] = n;
  t.nb[0] = 4;
  t.nb[1] = t.nb[2] = t.nb[3] = 4 * n;
  t.buffer = &b;
  t.data = b.host_data();
  return t;
}

}  // namespace

TEST_CASE("fake device: device_local memory is private, host_mapped and staging are read in place", "[fake]") {
  auto be = fake_backend();
  REQUIRE(be->device_count() == 1);
  Device& dev = be->device(0);
  const DeviceInfo info = dev.info();
  CHECK(info.name == "fake0");
  CHECK(info.kind == DeviceKind::discrete_gpu);
  CHECK_FALSE(info.reads_host_memory);
  CHECK_FALSE(info.unified_memory);
  for (const BufferKind kind : {BufferKind::device_local, BufferKind::host_mapped, BufferKind::staging}) {
    auto b = dev.allocate(64, kind);
    REQUIRE(b.has_value());
    CHECK((*b)->kind() == kind);
    CHECK((*b)->size() == 64);
    CHECK(((*b)->host_data() == nullptr) == (kind == BufferKind::device_local));
  }
}

TEST_CASE("fake device: a kernel reads only this device's own, non-staging buffers", "[fake]") {
  auto be = fake_backend();
  Device& dev = be->device(0);
  auto x = dev.allocate(16, BufferKind::device_local);
  auto y = dev.allocate(16, BufferKind::device_local);
  auto staging = dev.allocate(16, BufferKind::staging);
  REQUIRE((x.has_value() && y.has_value() && staging.has_value()));
  GraphNode n;
  n.op = OpKind::scale;
  n.src[0] = 0;
  n.dst = 1;
  n.f[0] = 2;

  std::vector<float> host(4, 1.0f);
  std::vector<GraphTensor> t{f32(**x, 4), f32(**y, 4)};
  t[0].buffer = nullptr;  // host memory, as a scheduler that forgot the upload would pass it
  t[0].data = host.data();
  auto st = dev.execute({t, {&n, 1}, 1});
  CHECK(st.code() == StatusCode::invalid_argument);
  CHECK_THAT(st.message(), Catch::Contains("scale source 0 is host memory"));

  t[0] = f32(**staging, 4);
  st = dev.execute({t, {&n, 1}, 1});
  CHECK_THAT(st.message(), Catch::Contains("staging buffer, which kernels never touch"));

  // Another device's buffer: the second fake backend's.
  auto other = fake_backend();
  auto foreign = other->device(0).allocate(16, BufferKind::device_local);
  REQUIRE(foreign.has_value());
  t[0] = f32(**foreign, 4);
  st = dev.execute({t, {&n, 1}, 1});
  CHECK_THAT(st.message(), Catch::Contains("another device's buffer"));

  t[0] = f32(**x, 4);
  CHECK(dev.execute({t, {&n, 1}, 1}).is_ok());
  CHECK(dev.synchronize().is_ok());
}

TEST_CASE("fake device: execution and copies happen only when waited for", "[fake]") {
  auto be = fake_backend();
  Device& dev = be->device(0);
  auto a = dev.allocate(16, BufferKind::device_local);
  auto b = dev.allocate(16, BufferKind::device_local);
  auto y = dev.allocate(16, BufferKind::host_mapped);  // the host sees its bytes in place
  REQUIRE((a.has_value() && b.has_value() && y.has_value()));
  CHECK(dev.record_event() == 0);  // nothing queued yet

  std::vector<float> av{1, 2, 3, 4}, bv{10, 20, 30, 40};
  auto src = bytes_of(av);
  REQUIRE(dev.copy_to_device(**a, 0, src).is_ok());
  std::fill(src.begin(), src.end(), std::byte{0});  // the copy read its source already
  REQUIRE(dev.copy_to_device(**b, 0, bytes_of(bv)).is_ok());
  const uint64_t uploaded = dev.record_event();
  CHECK(uploaded > 0);

  GraphNode n;
  n.op = OpKind::add;
  n.src[0] = 0;
  n.src[1] = 1;
  n.dst = 2;
  const std::vector<GraphTensor> t{f32(**a, 4), f32(**b, 4), f32(**y, 4)};
  REQUIRE(dev.execute({t, {&n, 1}, 1}).is_ok());
  std::vector<float> back(4, -1.0f);
  REQUIRE(dev.copy_to_host(**y, 0, {reinterpret_cast<std::byte*>(back.data()), 16}).is_ok());
  const uint64_t done = dev.record_event();
  CHECK(done > uploaded);

  // Nothing ran: the host-visible destination still holds zeros, the host copy its -1s.
  CHECK(floats_at((*y)->host_data(), 4) == std::vector<float>{0, 0, 0, 0});
  CHECK(back == std::vector<float>{-1, -1, -1, -1});

  // Waiting for the uploads runs them and nothing after.
  REQUIRE(dev.wait_event(uploaded).is_ok());
  CHECK(floats_at((*y)->host_data(), 4) == std::vector<float>{0, 0, 0, 0});
  CHECK(back == std::vector<float>{-1, -1, -1, -1});

  REQUIRE(dev.wait_event(done).is_ok());
  CHECK(floats_at((*y)->host_data(), 4) == std::vector<float>{11, 22, 33, 44});
  CHECK(back == std::vector<float>{11, 22, 33, 44});
  CHECK(dev.wait_event(done + 1).code() == StatusCode::invalid_argument);  // never recorded
}

TEST_CASE("fake device: synchronous upload and download wait for queued work first", "[fake]") {
  auto be = fake_backend();
  Device& dev = be->device(0);
  auto x = dev.allocate(16, BufferKind::device_local);
  REQUIRE(x.has_value());
  REQUIRE(dev.copy_to_device(**x, 0, bytes_of({5, 6, 7, 8})).is_ok());
  std::vector<std::byte> got(16);
  REQUIRE((*x)->download(0, got).is_ok());  // drains the queued copy, then reads
  CHECK(got == bytes_of({5, 6, 7, 8}));
  REQUIRE((*x)->upload(4, bytes_of({-1})).is_ok());
  REQUIRE((*x)->download(0, got).is_ok());
  CHECK(got == bytes_of({5, -1, 7, 8}));
  CHECK((*x)->upload(12, bytes_of({1, 2})).code() == StatusCode::invalid_argument);
}

TEST_CASE("fake device: says yes to six F32 ops on contiguous tensors and no to anything else", "[fake]") {
  auto be = fake_backend();
  const Device& dev = be->device(0);
  GraphTensor a, b, y;
  for (GraphTensor* t : {&a, &b, &y}) {
    t->ne[0] = 8, t->ne[1] = 3;
    t->nb[0] = 4, t->nb[1] = 32, t->nb[2] = t->nb[3] = 96;
  }
  std::vector<GraphTensor> t{a, b, y};
  GraphNode n;
  n.src[0] = 0;
  n.dst = 2;
  for (const OpKind op : {OpKind::scale, OpKind::silu, OpKind::rms_norm, OpKind::copy}) {
    n.op = op;
    CHECK(dev.supports(n, t) == Support::yes);
  }
  n.src[1] = 1;
  for (const OpKind op : {OpKind::add, OpKind::mul}) {
    n.op = op;
    CHECK(dev.supports(n, t) == Support::yes);
  }
  t[1].ne[1] = 1;  // b broadcast over rows
  t[1].nb[2] = t[1].nb[3] = 32;
  CHECK(dev.supports(n, t) == Support::yes);
  n.op = OpKind::swiglu;
  CHECK(dev.supports(n, t) == Support::no);
  n.op = OpKind::matmul;
  CHECK(dev.supports(n, t) == Support::no);

  n.op = OpKind::add;
  t[1] = b;
  t[0].nb[1] = 48;  // a strided view
  CHECK(dev.supports(n, t) == Support::no);
  t[0] = a;
  t[2].type = StorageType::F16;
  CHECK(dev.supports(n, t) == Support::no);
}
