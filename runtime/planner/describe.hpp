// A model file's description for the planner, from its header alone.
#pragma once

#include <filesystem>
#include <string>

#include "planner/model_desc.hpp"
#include "registry/registry.hpp"
#include "switchyard/format.hpp"

namespace sy::planner {

/// The hyper-parameters and tensor table of an opened source; `path` names it in messages.
Result<ModelDesc> describe_source(const ModelSource& src, const std::filesystem::path& path);

/// Opens `path` (format by probing when empty) and reads hyper-parameters and tensor table.
Result<ModelDesc> describe_file(registry::Registry& reg, const std::filesystem::path& path, const std::string& format = {});

}  // namespace sy::planner
