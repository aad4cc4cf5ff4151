// One CUDA device on the SDK's device contract: its queue (stream, staging, events), the
// executor that runs sub-graphs there, and the memory kinds of cu_buffer.hpp.
#pragma once

#include <memory>
#include <string>

#include "cu_executor.hpp"

namespace sy::cuda {

class CudaDevice final : public Device {
 public:
  /// Device `ordinal` of the CUDA runtime, named "cuda<ordinal>".
  static Result<std::unique_ptr<CudaDevice>> create(int ordinal);
  ~CudaDevice() override;

  DeviceInfo info() const noexcept override;
  Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferKind kind) noexcept override;
  Support supports(const GraphNode& node, std::span<const GraphTensor> tensors) const noexcept override;
  Status execute(const SubGraph& graph) noexcept override;
  Status copy_to_device(Buffer& dst, size_t offset, std::span<const std::byte> src) noexcept override;
  Status copy_to_host(Buffer& src, size_t offset, std::span<std::byte> dst) noexcept override;
  uint64_t record_event() noexcept override;
  Status wait_event(uint64_t event) noexcept override;
  Status synchronize() noexcept override;

 private:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal), name_("cuda" + std::to_string(ordinal)) {}
  Result<CudaBuffer*> own(Buffer& b, size_t offset, size_t bytes, const char* what) const;

  int ordinal_;
  std::string name_;
  Features features_;
  std::unique_ptr<Queue> queue_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace sy::cuda
