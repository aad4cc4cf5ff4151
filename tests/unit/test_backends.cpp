// Backend plugins v0: devices and buffers. CPU always; Vulkan on lavapipe (CI) or a GPU;
// CUDA where a GPU exists, otherwise a clear "unavailable".
#include <catch2/catch.hpp>

#include <cstdlib>
#include <numeric>

#include "registry/registry.hpp"
#include "skip.hpp"

using namespace sy;

namespace {

registry::Registry& reg() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}

void round_trip(Device& dev) {
  std::vector<std::byte> src(3 * 1024 * 1024 + 5);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>((i * 131u) & 0xff);
  auto buf = dev.allocate(src.size(), BufferKind::device_local);
  REQUIRE(buf.has_value());
  auto& b = *buf.value();
  CHECK(b.size() == src.size());
  REQUIRE(b.upload(0, src).is_ok());
  std::vector<std::byte> back(src.size());
  REQUIRE(b.download(0, back).is_ok());
  CHECK(back == src);
  // A partial write at an offset.
  std::vector<std::byte> patch(100, std::byte{0x5a});
  REQUIRE(b.upload(1000, patch).is_ok());
  std::vector<std::byte> got(100);
  REQUIRE(b.download(1000, got).is_ok());
  CHECK(got == patch);
  // Out of range is an error, never a write past the end.
  const auto st = b.upload(src.size() - 10, patch);
  CHECK(st.code() == StatusCode::invalid_argument);
}

}  // namespace

TEST_CASE("cpu backend: one device with the machine's memory, buffers round-trip", "[backends]") {
  ParamMap p;
  p.set("threads", int64_t{2});
  auto be = reg().create_backend("cpu", p);
  REQUIRE(be.has_value());
  REQUIRE(be.value()->device_count() == 1);
  auto& dev = be.value()->device(0);
  const auto info = dev.info();
  CHECK(info.name == "cpu");
  CHECK(info.kind == DeviceKind::cpu);
  CHECK(info.total_memory > (1ull << 28));
  CHECK(info.free_memory <= info.total_memory);
  round_trip(dev);
  auto buf = dev.allocate(4096, BufferKind::device_local);
  REQUIRE(buf.has_value());
  CHECK(reinterpret_cast<uintptr_t>(buf.value()->host_data()) % 64 == 0);
  p.set("devices", std::vector<int64_t>{1});
  CHECK(reg().create_backend("cpu", p).status().message() == "cpu: device 1 does not exist (this machine has 1)");
}

TEST_CASE("vulkan backend: devices and buffers (lavapipe in CI)", "[backends][vulkan]") {
  if (!reg().find(ComponentKind::backend, "vulkan")) {
    sy::test::skip_unless_ci("the Vulkan backend is not built here");
    return;
  }
  auto be = reg().create_backend("vulkan", {});
  if (!be.has_value()) {
    sy::test::skip_unless_ci("no Vulkan device: " + be.status().message());
    return;
  }
  REQUIRE(be.value()->device_count() >= 1);
  for (size_t i = 0; i < be.value()->device_count(); ++i) {
    auto& dev = be.value()->device(i);
    const auto info = dev.info();
    INFO(info.description);
    CHECK(info.name == "vulkan" + std::to_string(i));
    CHECK(info.total_memory > 0);
    round_trip(dev);
  }
  ParamMap p;
  p.set("devices", std::vector<int64_t>{99});
  CHECK(reg().create_backend("vulkan", p).status().code() == StatusCode::invalid_argument);
}

// Without a CUDA device (CI), creating the backend is refused with the reason; with one, its
// devices report memory and round-trip buffers. A build without the backend (the sanitizer
// build, or no nvcc) skips: CI's normal build requires it (scripts/test).
TEST_CASE("cuda backend: a GPU's memory, or a clear reason why not", "[backends][cuda]") {
  if (!reg().find(ComponentKind::backend, "cuda"))
    SY_SKIP_HARDWARE("the CUDA backend is not in this build (SWITCHYARD_CUDA=OFF, or no nvcc)");
  auto be = reg().create_backend("cuda", {});
  if (!be.has_value()) {
    CHECK(be.status().code() == StatusCode::unavailable);
    CHECK(be.status().message().rfind("cuda: no usable CUDA device (", 0) == 0);
    return;
  }
  for (size_t i = 0; i < be.value()->device_count(); ++i) {
    auto& dev = be.value()->device(i);
    CHECK(dev.info().total_memory > 0);
    round_trip(dev);
  }
}
