// The WeightFormat component of a quantized-checkpoint plugin: it claims the Hugging Face
// folders whose quantization_config names its method, and opens them through the hf reader
// with its scheme. Each plugin (awq, gptq, fp8) is this plus its scheme.
#pragma once

#include <memory>

#include "quant_scheme.hpp"
#include "switchyard/format.hpp"
#include "switchyard/plugin.hpp"

namespace sy::hfq {

class QuantFormat final : public WeightFormat {
 public:
  explicit QuantFormat(hf::QuantReader reader) : reader_(std::move(reader)) {}
  int probe(const std::filesystem::path& path) const noexcept override;
  Result<std::unique_ptr<ModelSource>> open(const std::filesystem::path& path) const noexcept override;

 private:
  hf::QuantReader reader_;
};

/// The descriptor of a plugin with one format component `name`, made by `factory`.
PluginDescriptor quant_plugin(const std::string& name, const std::string& summary, ComponentFactory factory);

}  // namespace sy::hfq
