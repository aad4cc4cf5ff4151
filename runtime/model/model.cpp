#include "model/model.hpp"

#include "log/log.hpp"
#include "model/source.hpp"

namespace sy::model {

Result<std::unique_ptr<Model>> Model::load(OpenedSource opened, const std::filesystem::path& path,
                                           const WeightPlacement& where, Layers layers, const WeightOptions& opts) {
  std::unique_ptr<Model> m(new Model());
  m->format_ = std::move(opened.format);
  m->source_ = std::move(opened.source);
  auto hp = read_hparams(m->source_->metadata(), m->source_->tensors());
  if (!hp) return error::invalid_argument(path.string() + ": " + hp.status().message());
  m->hp_ = std::move(*hp);
  if (!layers.layer_device.empty() && static_cast<int64_t>(layers.layer_device.size()) != m->hp_.n_layer)
    return error::internal("placement covers " + std::to_string(layers.layer_device.size()) + " layers, the model has " +
                           std::to_string(m->hp_.n_layer));
  m->layers_ = std::move(layers);
  m->host_ = where.host;
  auto w = Weights::load(*m->source_, where, opts);
  if (!w) return Status(w.status().code(), path.string() + ": " + w.status().message());
  m->weights_ = std::move(*w);
  auto arch = make_architecture(m->hp_, m->weights_);
  if (!arch) return Status(arch.status().code(), path.string() + ": " + arch.status().message());
  m->arch_ = std::move(*arch);
  std::string where_text;
  for (size_t d = 0; d < where.devices.size(); ++d)
    if (m->weights_.placed()[d].weights > 0)
      where_text += (where_text.empty() ? "" : ", ") + std::to_string(m->weights_.placed()[d].weights >> 20) +
                    " MiB on " + where.devices[d]->info().name;
  log::get("model")->info("{}: {} with {} layers, weights: {}", path.string(), m->hp_.arch, m->hp_.n_layer,
                          where_text.empty() ? "none" : where_text);
  return m;
}

Status check_layout(const HParams& hp, std::span<const TensorDesc> tensors) {
  const Weights w = Weights::shapes_only(tensors);
  auto arch = make_architecture(hp, w);
  return arch ? Status::ok() : arch.status();
}

}  // namespace sy::model
