#include "vk_pipelines.hpp"

#include "spirv.hpp"

namespace sy::vulkan {

Result<std::unique_ptr<Pipelines>> Pipelines::create(Context& ctx) {
  std::unique_ptr<Pipelines> p(new Pipelines(ctx));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint64_t)};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.pushConstantRangeCount = 1;
  lci.pPushConstantRanges = &range;
  if (auto r = vkCreatePipelineLayout(ctx.device(), &lci, nullptr, &p->layout_); r != VK_SUCCESS)
    return error::unavailable(ctx.name() + ": cannot create the pipeline layout (" + vk_error(r) + ")");
  return p;
}

Pipelines::~Pipelines() {
  for (auto& [name, pipe] : cache_) vkDestroyPipeline(ctx_.device(), pipe, nullptr);
  if (layout_) vkDestroyPipelineLayout(ctx_.device(), layout_, nullptr);
}

Result<VkPipeline> Pipelines::get(std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = cache_.find(name); it != cache_.end()) return it->second;
  const auto code = spirv(name);
  if (code.empty()) return error::internal(ctx_.name() + ": no compiled shader named '" + std::string(name) + "'");
  VkShaderModuleCreateInfo mci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mci.codeSize = code.size_bytes();
  mci.pCode = code.data();
  VkShaderModule module = VK_NULL_HANDLE;
  if (auto r = vkCreateShaderModule(ctx_.device(), &mci, nullptr, &module); r != VK_SUCCESS)
    return error::internal(ctx_.name() + ": shader '" + std::string(name) + "' was refused (" + vk_error(r) + ")");
  VkComputePipelineCreateInfo pci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  pci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pci.stage.module = module;
  pci.stage.pName = "main";
  pci.layout = layout_;
  VkPipeline pipe = VK_NULL_HANDLE;
  const auto r = vkCreateComputePipelines(ctx_.device(), VK_NULL_HANDLE, 1, &pci, nullptr, &pipe);
  vkDestroyShaderModule(ctx_.device(), module, nullptr);
  if (r != VK_SUCCESS)
    return error::internal(ctx_.name() + ": cannot build the pipeline of shader '" + std::string(name) + "' (" +
                           vk_error(r) + ")");
  cache_.emplace(std::string(name), pipe);
  return pipe;
}

}  // namespace sy::vulkan
