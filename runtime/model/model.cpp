#include "model/model.hpp"

#include "log/log.hpp"
#include "model/source.hpp"

namespace sy::model {

Result<std::unique_ptr<Model>> Model::load(registry::Registry& reg, const std::filesystem::path& path,
                                           const std::string& format, Device& device, int device_index,
                                           const WeightOptions& opts) {
  auto opened = open_source(reg, path, format);
  if (!opened) return opened.status();
  return load(std::move(*opened), path, device, device_index, opts);
}

Result<std::unique_ptr<Model>> Model::load(OpenedSource opened, const std::filesystem::path& path, Device& device,
                                           int device_index, const WeightOptions& opts) {
  std::unique_ptr<Model> m(new Model());
  m->format_ = std::move(opened.format);
  m->source_ = std::move(opened.source);
  auto hp = read_hparams(m->source_->metadata(), m->source_->tensors());
  if (!hp) return error::invalid_argument(path.string() + ": " + hp.status().message());
  m->hp_ = std::move(*hp);
  auto w = Weights::load(*m->source_, device, device_index, opts);
  if (!w) return error::invalid_argument(path.string() + ": " + w.status().message());
  m->weights_ = std::move(*w);
  auto arch = make_architecture(m->hp_, m->weights_);
  if (!arch) return Status(arch.status().code(), path.string() + ": " + arch.status().message());
  m->arch_ = std::move(*arch);
  log::get("model")->info("{}: {} with {} layers, {} MiB of weights on {}", path.string(), m->hp_.arch,
                          m->hp_.n_layer, m->weights_.bytes() >> 20, device.info().name);
  return m;
}

Status check_layout(const HParams& hp, std::span<const TensorDesc> tensors) {
  const Weights w = Weights::shapes_only(tensors);
  auto arch = make_architecture(hp, w);
  return arch ? Status::ok() : arch.status();
}

}  // namespace sy::model
