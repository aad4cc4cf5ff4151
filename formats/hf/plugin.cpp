// The hf plugin: the WeightFormat component over Model.
#include "hf_model.hpp"
#include "probe.hpp"
#include "switchyard/plugin.hpp"

namespace sy::hf {
namespace {

class HfFormat final : public WeightFormat {
 public:
  int probe(const std::filesystem::path& path) const noexcept override { return probe_path(path); }
  Result<std::unique_ptr<ModelSource>> open(const std::filesystem::path& path) const noexcept override {
    try {
      auto m = Model::open(path);
      if (!m) return m.status();
      return std::unique_ptr<ModelSource>(std::move(m.value()));
    } catch (const std::exception& e) {
      return error::internal(path.string() + ": " + e.what());
    }
  }
};

Result<std::unique_ptr<Component>> make(const ParamMap&) noexcept {
  return guard_factory([]() -> Result<std::unique_ptr<Component>> { return std::make_unique<HfFormat>(); });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "hf";
    pd.version = "0.1.0";
    pd.summary = "Hugging Face model folders: config.json + safetensors (one file or shards), unquantized";
    ComponentDesc c;
    c.kind = ComponentKind::format;
    c.name = "hf";
    c.version = "0.1.0";
    c.rank = 50;
    c.summary = "Zero-copy safetensors reader with config.json and tensor-name mapping";
    c.factory = make;
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::hf

SWITCHYARD_PLUGIN(sy::hf::describe)
