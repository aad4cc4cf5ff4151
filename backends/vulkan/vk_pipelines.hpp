// Compute pipelines, one per shader variant, created the first time a node needs one and
// kept for the device's life. Every pipeline shares one layout: no descriptor sets, and an
// 8-byte push constant holding the address of the node's record.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "vk_context.hpp"

namespace sy::vulkan {

class Pipelines {
 public:
  static Result<std::unique_ptr<Pipelines>> create(Context& ctx);
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  VkPipelineLayout layout() const { return layout_; }
  /// The pipeline of shader variant `name`, built on first use.
  Result<VkPipeline> get(std::string_view name);

 private:
  explicit Pipelines(Context& ctx) : ctx_(ctx) {}
  Context& ctx_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  // Looked up by string_view without building a string: no allocation per node per step.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::mutex mu_;
  std::unordered_map<std::string, VkPipeline, Hash, std::equal_to<>> cache_;
};

}  // namespace sy::vulkan
