// Two test weight formats that probe by file extension, for the automatic choice of a
// reader: "test_magic" is certain about *.tmagic files, "test_guess" half-sure about
// anything ending in .t*; both claim *.ttie equally, and rank breaks the tie.
#include <string>

#include "common.hpp"
#include "switchyard/format.hpp"

namespace {

class ProbeOnly final : public sy::WeightFormat {
 public:
  explicit ProbeOnly(bool magic) : magic_(magic) {}
  int probe(const std::filesystem::path& path) const noexcept override {
    const std::string ext = path.extension().string();
    if (ext == ".ttie") return 60;
    if (magic_) return ext == ".tmagic" ? 100 : 0;
    return ext.rfind(".t", 0) == 0 ? 50 : 0;
  }
  sy::Result<std::unique_ptr<sy::ModelSource>> open(const std::filesystem::path&) const noexcept override {
    return sy::error::unsupported("test formats only probe");
  }

 private:
  bool magic_;
};

template <bool Magic>
sy::Result<std::unique_ptr<sy::Component>> make(const sy::ParamMap&) noexcept {
  return sy::guard_factory([]() -> sy::Result<std::unique_ptr<sy::Component>> { return std::make_unique<ProbeOnly>(Magic); });
}

sy::ComponentDesc format(const char* name, int rank, sy::ComponentFactory f) {
  sy::ComponentDesc c;
  c.kind = sy::ComponentKind::format;
  c.name = name;
  c.version = "1.0.0";
  c.rank = rank;
  c.factory = f;
  return c;
}

const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "test-formats";
    pd.version = "1.0.0";
    pd.components.push_back(format("test_guess", 5, make<false>));
    pd.components.push_back(format("test_magic", 20, make<true>));
    return pd;
  }();
  return &d;
}
}  // namespace
SWITCHYARD_PLUGIN(describe)
