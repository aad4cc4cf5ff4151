// A loaded model: the format plugin's source (kept open: CPU weights are its mmap), the
// hyper-parameters, the weights on their device and the architecture's graph builder.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "model/architecture.hpp"
#include "model/hparams.hpp"
#include "model/source.hpp"
#include "model/weights.hpp"
#include "registry/registry.hpp"

namespace sy::model {

class Model {
 public:
  /// Opens `path` with `format` (empty: the best probe), reads the hyper-parameters and
  /// places the weights on `device` (scheduler index `device_index`).
  static Result<std::unique_ptr<Model>> load(registry::Registry& reg, const std::filesystem::path& path,
                                             const std::string& format, Device& device, int device_index,
                                             const WeightOptions& opts = {});
  /// The same for a source already opened (bring_up reads its header for the preflight
  /// checks first, so the file is opened and probed once).
  static Result<std::unique_ptr<Model>> load(OpenedSource opened, const std::filesystem::path& path, Device& device,
                                             int device_index, const WeightOptions& opts = {});

  [[nodiscard]] const HParams& hparams() const { return hp_; }
  [[nodiscard]] const Metadata& metadata() const { return source_->metadata(); }
  [[nodiscard]] const Architecture& architecture() const { return *arch_; }
  [[nodiscard]] const Weights& weights() const { return weights_; }

 private:
  Model() = default;
  registry::Owned<WeightFormat> format_;  // first: its library must outlive the source
  std::unique_ptr<ModelSource> source_;
  HParams hp_;
  Weights weights_;
  std::unique_ptr<Architecture> arch_;
};

}  // namespace sy::model
