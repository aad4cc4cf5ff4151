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
  /// Where the layers' caches live (device indices, as WeightPlacement's).
  struct Layers {
    std::vector<int> layer_device;  ///< per layer; empty: every layer on the host device
    int output_device = 0;
  };

  /// Reads the hyper-parameters of an opened source (bring_up reads its header for the
  /// preflight checks first, so the file is opened and probed once) and places the weights
  /// as `where` says.
  static Result<std::unique_ptr<Model>> load(OpenedSource opened, const std::filesystem::path& path,
                                             const WeightPlacement& where, Layers layers, const WeightOptions& opts = {});

  [[nodiscard]] const HParams& hparams() const { return hp_; }
  [[nodiscard]] const Metadata& metadata() const { return source_->metadata(); }
  /// The opened model file or folder the weights come from.
  [[nodiscard]] const ModelSource& source() const { return *source_; }
  [[nodiscard]] const Architecture& architecture() const { return *arch_; }
  [[nodiscard]] const Weights& weights() const { return weights_; }
  /// Device index of layer il's cache and state.
  [[nodiscard]] int layer_device(int64_t il) const {
    return layers_.layer_device.empty() ? host_ : layers_.layer_device[static_cast<size_t>(il)];
  }

 private:
  Model() = default;
  registry::Owned<WeightFormat> format_;  // first: its library must outlive the source
  std::unique_ptr<ModelSource> source_;
  HParams hp_;
  Weights weights_;
  Layers layers_;
  int host_ = 0;
  std::unique_ptr<Architecture> arch_;
};

}  // namespace sy::model
