// Compute backends: devices, their memory, and execution of sub-graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/component.hpp"
#include "switchyard/graph.hpp"
#include "switchyard/ops.hpp"
#include "switchyard/status.hpp"
#include "switchyard/storage.hpp"

namespace sy {

enum class DeviceKind : uint32_t { cpu, discrete_gpu, integrated_gpu, other };

/// "cpu", "discrete_gpu", "integrated_gpu" or "other".
std::string_view device_kind_name(DeviceKind k) noexcept;

/// What a device is and how much memory it has right now.
struct DeviceInfo {
  std::string name;             ///< short id used in placement rules: "cpu", "cuda0", "vulkan1"
  std::string description;      ///< what the user recognises: "NVIDIA GeForce RTX 4090"
  DeviceKind kind = DeviceKind::other;
  uint64_t total_memory = 0;    ///< bytes the device can hold
  uint64_t free_memory = 0;     ///< bytes free at the time of the query
  bool host_visible = false;    ///< buffers can be read by the CPU without a copy (unified memory)
};

/// A block of device memory. Destroying it frees the memory.
class Buffer {
 public:
  virtual ~Buffer() = default;
  /// Size in bytes.
  [[nodiscard]] virtual size_t size() const noexcept = 0;
  /// Copies host bytes into the buffer at `offset`.
  [[nodiscard]] virtual Status upload(size_t offset, std::span<const std::byte> src) noexcept = 0;
  /// Copies buffer bytes at `offset` into host memory.
  [[nodiscard]] virtual Status download(size_t offset, std::span<std::byte> dst) const noexcept = 0;
  /// Host address of the contents when the memory is host-visible, else nullptr.
  [[nodiscard]] virtual void* host_data() noexcept { return nullptr; }

 protected:
  Buffer() = default;
};


/// One device of a backend (a GPU, or the CPU with its RAM).
class Device {
 public:
  virtual ~Device() = default;
  /// Identity and current memory.
  [[nodiscard]] virtual DeviceInfo info() const noexcept = 0;
  /// Allocates `bytes` of device memory, aligned for every kernel of this backend.
  [[nodiscard]] virtual Result<std::unique_ptr<Buffer>> allocate(size_t bytes) noexcept = 0;
  /// Capability query: can this device run `op` with weights (or inputs) of `type`?
  [[nodiscard]] virtual bool supports(OpKind op, StorageType type) const noexcept = 0;
  /// Executes a sub-graph whose tensors live in this device's buffers.
  [[nodiscard]] virtual Status execute(const SubGraph& graph) noexcept = 0;

 protected:
  Device() = default;
};

class ParamMap;

/// The devices a backend should drive: the pipeline's `devices` list (handed to the
/// factory as the integer-list parameter "devices"), or every device when it is absent or
/// empty. An index outside [0, available) is an error naming `backend` and the count.
Result<std::vector<size_t>> select_devices(const ParamMap& params, size_t available, std::string_view backend);

/// A compute-backend component (cpu, vulkan, cuda).
class Backend : public Component {
 public:
  [[nodiscard]] ComponentKind kind() const noexcept final { return ComponentKind::backend; }
  /// Number of devices this backend drives (after the pipeline's `devices` selection).
  [[nodiscard]] virtual size_t device_count() const noexcept = 0;
  /// Device i, 0 <= i < device_count(); owned by the backend.
  [[nodiscard]] virtual Device& device(size_t i) noexcept = 0;
};

}  // namespace sy
