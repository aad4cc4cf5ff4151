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
///
/// Who reads which memory (the rules the scheduler moves data by):
/// - host memory (a file's mapping, the engine's inputs, the CPU backend's buffers) is read
///   in place by a device only when `reads_host_memory` is true (the CPU);
/// - a device's own buffers are read by its kernels, and by the host in place when the
///   buffer's host_data() is non-null (host_mapped and staging buffers always; device_local
///   ones on unified memory, `unified_memory`);
/// - every other pairing goes through a copy the scheduler queues (copy_to_device /
///   copy_to_host), and persistent weights are never copied per step.
struct DeviceInfo {
  std::string name;             ///< short id used in placement rules: "cpu", "cuda0", "vulkan1"
  std::string description;      ///< what the user recognises: "NVIDIA GeForce RTX 4090"
  DeviceKind kind = DeviceKind::other;
  uint64_t total_memory = 0;    ///< bytes the device can hold
  uint64_t free_memory = 0;     ///< bytes free at the time of the query
  bool reads_host_memory = false;  ///< kernels read any host address in place (the CPU backend)
  bool unified_memory = false;     ///< device_local buffers are also mapped for the host
  /// What the device offers and which kernel paths it will use, for `plugins --devices`:
  /// "subgroup size 32", "path matmul: subgroup", ...
  std::vector<std::string> features;
};

/// What a buffer is for; the kind decides who can read it in place.
enum class BufferKind : uint32_t {
  device_local,  ///< the device's own memory, fastest for its kernels; host access by copies (or in place on unified memory)
  host_mapped,   ///< host memory the device's kernels can also read and write; the host reads it in place
  staging,       ///< pinned host memory for copies only: the host reads it in place, kernels never touch it
};

/// "device_local", "host_mapped" or "staging".
std::string_view buffer_kind_name(BufferKind k) noexcept;

/// A block of device memory. Destroying it frees the memory (after the device's queued
/// work that uses it finished: destroy buffers only after synchronize()).
class Buffer {
 public:
  virtual ~Buffer() = default;
  /// Size in bytes.
  [[nodiscard]] virtual size_t size() const noexcept = 0;
  /// What the buffer is for.
  [[nodiscard]] virtual BufferKind kind() const noexcept { return BufferKind::device_local; }
  /// Copies host bytes into the buffer at `offset`; synchronous (waits for queued work on the buffer first).
  [[nodiscard]] virtual Status upload(size_t offset, std::span<const std::byte> src) noexcept = 0;
  /// Copies buffer bytes at `offset` into host memory; synchronous.
  [[nodiscard]] virtual Status download(size_t offset, std::span<std::byte> dst) const noexcept = 0;
  /// Host address of the contents when the host can read them in place, else nullptr.
  [[nodiscard]] virtual void* host_data() noexcept { return nullptr; }

 protected:
  Buffer() = default;
};

/// A device's answer to "can you run this node?" (ggml's supports_op + offload_op).
enum class Support : uint32_t {
  no = 0,          ///< cannot run it (type, shape, layout or parameters unsupported)
  yes = 1,         ///< runs it well
  prefer_not = 2,  ///< can run it, but the data's own device is as good (tiny or host-bound work)
};

/// One device of a backend (a GPU, or the CPU with its RAM).
///
/// Execution is asynchronous: execute() and the copy_* calls queue work in order on the
/// device's one queue and may return before it ran. Results are readable after
/// synchronize() or wait_event() of an event recorded after them. A device whose work is
/// synchronous (the CPU) runs it in the call and keeps the default event functions.
class Device {
 public:
  virtual ~Device() = default;
  /// Identity and current memory.
  [[nodiscard]] virtual DeviceInfo info() const noexcept = 0;
  /// Allocates `bytes` of memory of `kind`, aligned for every kernel of this backend. A
  /// device without a separate kind (the CPU) may return device_local memory that is host-readable.
  [[nodiscard]] virtual Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferKind kind) noexcept = 0;
  /// Capability query for one node: `node` indexes `tensors`, which carry every source's
  /// and the destination's storage type, shape and byte strides (memory may not be
  /// assigned yet: buffer and data can be null).
  [[nodiscard]] virtual Support supports(const GraphNode& node, std::span<const GraphTensor> tensors) const noexcept = 0;
  /// Queues a sub-graph whose tensors live in memory this device reads (see DeviceInfo).
  [[nodiscard]] virtual Status execute(const SubGraph& graph) noexcept = 0;
  /// Queues a copy of host bytes into `dst` at `offset`. `src` is read before the call
  /// returns (through staging where needed), so the caller may reuse it at once.
  [[nodiscard]] virtual Status copy_to_device(Buffer& dst, size_t offset, std::span<const std::byte> src) noexcept {
    return dst.upload(offset, src);
  }
  /// Queues a copy of `src` bytes at `offset` into host memory `dst`, valid after the next
  /// synchronize() (or wait_event() of a later event).
  [[nodiscard]] virtual Status copy_to_host(Buffer& src, size_t offset, std::span<std::byte> dst) noexcept {
    return src.download(offset, dst);
  }
  /// Marks the point the queue has reached; the event completes when everything queued
  /// before it has. Events are increasing numbers; 0 means "nothing queued".
  [[nodiscard]] virtual uint64_t record_event() noexcept { return 0; }
  /// Waits on the host until `event` completed.
  [[nodiscard]] virtual Status wait_event(uint64_t event) noexcept {
    (void)event;
    return synchronize();
  }
  /// Waits on the host until every queued operation completed.
  [[nodiscard]] virtual Status synchronize() noexcept { return Status::ok(); }

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
