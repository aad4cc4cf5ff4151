// The -p PIPELINE | -m MODEL choice shared by run and chat: a pipeline file, or the
// built-in default (the cpu backend and every section's defaults) around a model file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"

namespace sy::cli {

/// The validated pipeline, with -m replacing model.path; diagnostics go to stderr, and
/// nullopt means the caller should exit with status 1.
std::optional<pipeline::Pipeline> pipeline_from_args(const std::string& command, const std::string& pipeline_file,
                                                     const std::string& model, const std::vector<std::string>& sets);

}  // namespace sy::cli
