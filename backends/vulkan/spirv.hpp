// The compute shaders compiled at build time (shaders/*.list), embedded as SPIR-V words.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sy::vulkan {

/// The SPIR-V of variant `name`; empty when no variant has that name.
std::span<const uint32_t> spirv(std::string_view name);

}  // namespace sy::vulkan
