#include "vk_device.hpp"

#include <string>

namespace sy::vulkan {
namespace {

// "path <op>: <path>" for each fast path the device will take. A path is named after the
// feature it needs ("subgroup", "integer dot", "cooperative matrix"), which is how the
// listing knows whether the device has it.
bool path_available(std::string_view path, const Features& f) {
  if (f.portable_only) return false;
  if (path.find("subgroup") != std::string_view::npos) return f.subgroup_arithmetic;
  if (path.find("dot") != std::string_view::npos) return f.integer_dot_product;
  if (path.find("coop") != std::string_view::npos) return f.cooperative_matrix;
  return true;
}

}  // namespace

Result<std::unique_ptr<VulkanDevice>> VulkanDevice::create(std::unique_ptr<Context> ctx) {
  std::unique_ptr<VulkanDevice> d(new VulkanDevice(std::move(ctx)));
  auto pipes = Pipelines::create(*d->ctx_);
  if (!pipes) return pipes.status();
  d->pipelines_ = std::move(pipes.value());
  auto q = Queue::create(*d->ctx_, d->pipelines_->layout());
  if (!q) return q.status();
  d->queue_ = std::move(q.value());
  d->executor_ = std::make_unique<Executor>(*d->ctx_, *d->pipelines_, *d->queue_);
  return d;
}

VulkanDevice::~VulkanDevice() {
  // The queue waits for the device before the pipelines and context go.
  executor_.reset();
  queue_.reset();
  pipelines_.reset();
}

DeviceInfo VulkanDevice::info() const noexcept {
  DeviceInfo d;
  d.name = ctx_->name();
  const auto& p = ctx_->properties();
  d.description = p.deviceName;
  switch (p.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: d.kind = DeviceKind::discrete_gpu; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: d.kind = DeviceKind::integrated_gpu; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: d.kind = DeviceKind::cpu; break;
    default: d.kind = DeviceKind::other;
  }
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (ctx_->has_memory_budget()) mp.pNext = &budget;
  vkGetPhysicalDeviceMemoryProperties2(ctx_->physical(), &mp);
  const auto& mem = mp.memoryProperties;
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
    if (!(mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
    d.total_memory += mem.memoryHeaps[h].size;
    d.free_memory += ctx_->has_memory_budget()
                         ? (budget.heapBudget[h] > budget.heapUsage[h] ? budget.heapBudget[h] - budget.heapUsage[h] : 0)
                         : mem.memoryHeaps[h].size;
  }
  d.free_memory = std::min(d.free_memory, d.total_memory);
  d.reads_host_memory = false;
  d.unified_memory = ctx_->unified_memory();
  try {
    const auto& f = ctx_->features();
    d.features.push_back("vulkan " + std::to_string(VK_API_VERSION_MAJOR(p.apiVersion)) + "." +
                         std::to_string(VK_API_VERSION_MINOR(p.apiVersion)));
    d.features.push_back(f.subgroup_size ? "subgroup size " + std::to_string(f.subgroup_size) +
                                               (f.subgroup_arithmetic ? ", arithmetic" : ", no arithmetic")
                                         : "subgroups: no");
    d.features.push_back(f.integer_dot_product ? "integer dot product" : "integer dot product: no");
    d.features.push_back(f.cooperative_matrix ? "cooperative matrix (not used yet)" : "cooperative matrix: no");
    if (f.portable_only) d.features.push_back("paths: portable only (SWITCHYARD_VULKAN_PATH=portable)");
    for (const KernelDef* k : all_kernels())
      if (!k->path.empty() && path_available(k->path, f)) d.features.push_back("path " + std::string(k->path));
  } catch (...) {
    // The identity and memory matter more than the feature list.
  }
  return d;
}

Result<std::unique_ptr<Buffer>> VulkanDevice::allocate(size_t bytes, BufferKind kind) noexcept {
  try {
    auto raw = make_raw_buffer(*ctx_, bytes, kind);
    if (!raw) return raw.status();
    return std::unique_ptr<Buffer>(new VulkanBuffer(std::move(raw.value()), kind, *queue_));
  } catch (...) {
    return error::out_of_memory(ctx_->name() + ": could not allocate a buffer object");
  }
}

Support VulkanDevice::supports(const GraphNode& node, std::span<const GraphTensor> tensors) const noexcept {
  try {
    return executor_->supports(node, tensors);
  } catch (...) {
    return Support::no;
  }
}

Status VulkanDevice::execute(const SubGraph& graph) noexcept {
  try {
    return executor_->execute(graph);
  } catch (const std::exception& e) {
    return error::internal(ctx_->name() + ": execute: " + e.what());
  }
}

Result<VulkanBuffer*> VulkanDevice::own(Buffer& b, const char* what) const {
  auto* vb = dynamic_cast<VulkanBuffer*>(&b);
  if (!vb || vb->context() != ctx_.get())
    return error::invalid_argument(ctx_->name() + ": " + what + ": the buffer belongs to another device");
  return vb;
}

Status VulkanDevice::copy_to_device(Buffer& dst, size_t offset, std::span<const std::byte> src) noexcept {
  try {
    auto vb = own(dst, "copy_to_device");
    if (!vb) return vb.status();
    if (auto st = vb.value()->check_range(offset, src.size(), "copy_to_device"); !st) return st;
    return queue_->copy_to_device(vb.value()->handle(), offset, src);
  } catch (const std::exception& e) {
    return error::internal(ctx_->name() + ": copy_to_device: " + e.what());
  }
}

Status VulkanDevice::copy_to_host(Buffer& src, size_t offset, std::span<std::byte> dst) noexcept {
  try {
    auto vb = own(src, "copy_to_host");
    if (!vb) return vb.status();
    if (auto st = vb.value()->check_range(offset, dst.size(), "copy_to_host"); !st) return st;
    return queue_->copy_to_host(vb.value()->handle(), offset, dst);
  } catch (const std::exception& e) {
    return error::internal(ctx_->name() + ": copy_to_host: " + e.what());
  }
}

uint64_t VulkanDevice::record_event() noexcept {
  try {
    auto v = queue_->record_event();
    // A failed submission surfaces at the next wait: the queue remembers it.
    return v ? v.value() : 0;
  } catch (...) {
    return 0;
  }
}

Status VulkanDevice::wait_event(uint64_t event) noexcept {
  try {
    return queue_->wait(event);
  } catch (const std::exception& e) {
    return error::internal(ctx_->name() + ": wait_event: " + e.what());
  }
}

Status VulkanDevice::synchronize() noexcept {
  try {
    return queue_->synchronize();
  } catch (const std::exception& e) {
    return error::internal(ctx_->name() + ": synchronize: " + e.what());
  }
}

}  // namespace sy::vulkan
