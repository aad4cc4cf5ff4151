// A model file's description for the planner, from its header alone.
#pragma once

#include <filesystem>
#include <string>

#include "planner/model_desc.hpp"
#include "registry/registry.hpp"

namespace sy::planner {

/// Opens `path` (format by probing when empty) and reads hyper-parameters and tensor table.
Result<ModelDesc> describe_file(registry::Registry& reg, const std::filesystem::path& path, const std::string& format = {});

}  // namespace sy::planner
