// The CPU backend: one device, the machine's RAM, running sub-graphs with the kernels of
// kernels/ and ops/ through exec/.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "dot.hpp"
#include "executor.hpp"
#include "host_buffer.hpp"
#include "thread_pool.hpp"
#include "switchyard/cpu.hpp"
#include "switchyard/backend.hpp"
#include "switchyard/plugin.hpp"

namespace sy::cpu {
namespace {

uint64_t meminfo_kib(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::string k;
  uint64_t v = 0;
  std::string unit;
  while (in >> k >> v >> unit)
    if (k == key) return v;
  return 0;
}

// Physical cores: distinct (package, core) pairs among the online CPUs. Hyper-threads share
// a core's execution units, so more matmul threads than cores only adds contention.
int physical_cores() {
  std::set<std::pair<std::string, std::string>> cores;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 || name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    std::ifstream pkg(e.path() / "topology/physical_package_id"), core(e.path() / "topology/core_id");
    std::string p, c;
    if (pkg >> p && core >> c) cores.emplace(p, c);  // offline CPUs have no topology
  }
  if (!cores.empty()) return static_cast<int>(cores.size());
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "CPU";
}

class CpuDevice final : public Device {
 public:
  CpuDevice(int threads, bool repack)
      : threads_(threads), isa_(detect_isa()), pool_(threads), executor_(isa_, pool_, repack),
        description_(cpu_model_name()), repack_(repack && dot_kernel(StorageType::Q4_K_X16, isa_).usable()),
        repack_i4_(repack_ && dot_kernel(StorageType::I4_G128_X16, isa_).usable()) {}
  DeviceInfo info() const noexcept override {
    DeviceInfo d;
    d.name = "cpu";
    d.description = description_ + " (" + std::to_string(threads_) + " threads, " + std::string(isa_name(isa_)) +
                    " kernels)";
    d.kind = DeviceKind::cpu;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    d.total_memory = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
    d.free_memory = meminfo_kib("MemAvailable:") * 1024;
    d.reads_host_memory = true;
    d.unified_memory = true;
    d.features = {std::string("kernels: ") + std::string(isa_name(isa_)), std::to_string(threads_) + " threads"};
    if (repack_)
      d.features.emplace_back(repack_i4_ ? "repacks Q4_K, Q6_K, Q4_0, Q8_0 and I4_G* (AWQ, GPTQ) weights into 16-row "
                                           "interleaved layouts at load"
                                         : "repacks Q4_K, Q6_K, Q4_0 and Q8_0 weights into 16-row interleaved layouts at load");
    return d;
  }
  // Every kind is plain RAM here: the host and the kernels read it alike.
  Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferKind kind) noexcept override {
    return HostBuffer::create(bytes, kind);
  }
  Support supports(const GraphNode& node, std::span<const GraphTensor> tensors) const noexcept override {
    return executor_.supports(node, tensors) ? Support::yes : Support::no;
  }
  Status execute(const SubGraph& g) noexcept override {
    try {
      return executor_.run(g);
    } catch (const std::bad_alloc&) {
      return error::out_of_memory("cpu: out of memory while running the graph");
    }
  }

 private:
  int threads_;
  Isa isa_;
  ThreadPool pool_;
  Executor executor_;
  std::string description_;
  bool repack_;
  bool repack_i4_;
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(int threads, bool repack) : device_(threads, repack) {}
  size_t device_count() const noexcept override { return 1; }
  Device& device(size_t) noexcept override { return device_; }

 private:
  CpuDevice device_;
};

Result<std::unique_ptr<Component>> make_cpu(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    if (auto chosen = select_devices(p, 1, "cpu"); !chosen) return chosen.status();
    int threads = physical_cores();  // "auto"
    if (auto t = p.get_int("threads")) threads = static_cast<int>(*t);
    if (threads < 1) threads = 1;
    return std::make_unique<CpuBackend>(threads, p.get_bool("repack").value_or(true));
  });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "cpu";
    pd.version = "0.1.0";
    pd.summary = "CPU compute backend (scalar, AVX2, AVX-512 kernels chosen at run time)";
    ComponentDesc c;
    c.kind = ComponentKind::backend;
    c.name = "cpu";
    c.version = "0.1.0";
    c.rank = 10;  // always available; GPU backends rank higher
    c.summary = "Host RAM and CPU cores";
    ParamSpec threads{"threads", ParamType::integer, "Worker threads; 'auto' uses the physical cores",
                      std::string("auto")};
    threads.min = 1;
    threads.max = 1024;
    threads.choices = {"auto"};
    threads.primary = true;
    ParamSpec repack{"repack", ParamType::boolean,
                     "Repack Q4_K, Q6_K, Q4_0, Q8_0 and I4_G* weights at load into 16-row interleaved layouts "
                     "(Q4_K_X16, Q6_K_X16, Q4_0_X16, Q8_0_X16, I4_G*_X16) where the CPU has a "
                     "kernel for it (AVX2 for the first four, AVX-512 VNNI for all): same memory, faster "
                     "matmuls; false keeps the file's layout",
                     true};
    c.params = {threads, repack};
    // The types with kernels of their own (kernels/dot_scalar.cpp and its ISA variants; the
    // interleaved layouts are what this backend repacks into); every other registered type
    // runs through the generic kernel (kernels/dot_generic.cpp).
    for (const char* t : {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "IQ4_NL", "Q2_K", "Q3_K", "Q4_K",
                          "Q5_K", "Q6_K", "IQ4_XS", "Q4_K_X16", "Q6_K_X16", "Q4_0_X16", "Q8_0_X16", "I4_G32_X16", "I4_G64_X16",
                          "I4_G128_X16"})
      c.traits.push_back(std::string(kTraitNativePrefix) + t);
    c.traits.emplace_back(kTraitGenericKernel);
    c.factory = make_cpu;
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::cpu

SWITCHYARD_PLUGIN(sy::cpu::describe)
