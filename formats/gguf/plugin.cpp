// The gguf plugin: the WeightFormat component over Model.
#include <cstring>
#include <fstream>

#include "model.hpp"
#include "switchyard/plugin.hpp"

namespace sy::gguf {
namespace {

class GgufFormat final : public WeightFormat {
 public:
  int probe(const std::filesystem::path& path) const noexcept override {
    try {
      std::ifstream in(path, std::ios::binary);
      char magic[4] = {};
      if (in && in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0) return 100;
      return 0;
    } catch (...) {
      return 0;
    }
  }
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
  return guard_factory([]() -> Result<std::unique_ptr<Component>> { return std::make_unique<GgufFormat>(); });
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "gguf";
    pd.version = "0.1.0";
    pd.summary = "GGUF v2/v3 models (llama.cpp), single files and split shards";
    ComponentDesc c;
    c.kind = ComponentKind::format;
    c.name = "gguf";
    c.version = "0.1.0";
    c.rank = 100;
    c.summary = "Zero-copy GGUF reader";
    c.factory = make;
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::gguf

SWITCHYARD_PLUGIN(sy::gguf::describe)
