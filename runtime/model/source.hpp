// Opening a model file through the format plugin that probes best (or a named one). The
// format component must outlive the source: its library holds the source's code.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "registry/registry.hpp"
#include "switchyard/format.hpp"

namespace sy::model {

struct OpenedSource {
  std::string format_name;               ///< the format component that opened it
  registry::Owned<WeightFormat> format;  // before the source: destroyed after it
  std::unique_ptr<ModelSource> source;
};

/// Opens `path` with `format` (empty: the best probe). A missing file is an error naming it;
/// so is a tensor the format describes with an unregistered type or a wrong byte count.
Result<OpenedSource> open_source(registry::Registry& reg, const std::filesystem::path& path, const std::string& format = {});

/// Checks every tensor of a source: a registered storage type, and bytes that match its shape.
Status check_tensors(const ModelSource& src, const std::string& format, const std::filesystem::path& path);

}  // namespace sy::model
