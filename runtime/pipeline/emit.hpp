// A validated pipeline written back as YAML, every default filled in: what
// `--print-pipeline` shows, and a file that loads to the same pipeline.
#pragma once

#include <string>

#include "pipeline/pipeline.hpp"

namespace sy::pipeline {

/// The pipeline as a YAML document (paths absolute, sampler parameters in full form).
std::string to_yaml(const Pipeline& p);

}  // namespace sy::pipeline
