#include "quant_format.hpp"

#include "hf_model.hpp"
#include "probe.hpp"

namespace sy::hfq {

int QuantFormat::probe(const std::filesystem::path& path) const noexcept {
  const auto c = hf::probe_checkpoint(path);
  return c && *c && **c == reader_.method ? hf::kProbeQuantReader : 0;
}

Result<std::unique_ptr<ModelSource>> QuantFormat::open(const std::filesystem::path& path) const noexcept {
  try {
    auto m = hf::Model::open(path, &reader_);
    if (!m) return m.status();
    return std::unique_ptr<ModelSource>(std::move(m.value()));
  } catch (const std::bad_alloc&) {
    return error::out_of_memory("decoding the " + reader_.method + " checkpoint " + path.string() + " ran out of memory");
  } catch (const std::exception& e) {
    return error::internal(path.string() + ": " + e.what());
  }
}

PluginDescriptor quant_plugin(const std::string& name, const std::string& summary, ComponentFactory factory) {
  PluginDescriptor pd;
  pd.name = name;
  pd.version = "0.1.0";
  pd.summary = summary;
  ComponentDesc c;
  c.kind = ComponentKind::format;
  c.name = name;
  c.version = "0.1.0";
  c.rank = 60;
  c.summary = summary;
  c.factory = factory;
  pd.components.push_back(std::move(c));
  return pd;
}

}  // namespace sy::hfq
