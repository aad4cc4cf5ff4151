// Example plugin: a sampler that soft-caps logits, logit -> cap * tanh(logit / cap), as
// Gemma 2 does on its final logits. It shows everything a plugin needs: the SDK header,
// a component with a typed parameter schema, a factory that never throws, and the
// exported descriptor.
#include <cmath>

#include <switchyard/plugin.hpp>
#include <switchyard/sampler.hpp>

namespace {

class SoftCap final : public sy::Sampler {
 public:
  explicit SoftCap(double cap) : cap_(cap) {}
  sy::Status apply(sy::CandidateList& c, const sy::SamplerContext&) noexcept override {
    for (auto& x : c.items) x.logit = static_cast<float>(cap_ * std::tanh(x.logit / cap_));
    return sy::Status::ok();  // tanh is monotonic: the order (and `sorted`) is unchanged
  }

 private:
  double cap_;
};

sy::Result<std::unique_ptr<sy::Component>> make(const sy::ParamMap& p) noexcept {
  return sy::guard_factory([&]() -> sy::Result<std::unique_ptr<sy::Component>> {
    return std::make_unique<SoftCap>(p.get_number("cap").value_or(30.0));
  });
}

const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "example-softcap";
    pd.version = "1.0.0";
    pd.summary = "Example out-of-tree plugin";
    sy::ComponentDesc c;
    c.kind = sy::ComponentKind::sampler;
    c.name = "softcap";
    c.version = "1.0.0";
    c.summary = "Soft-cap logits: cap * tanh(logit / cap)";
    sy::ParamSpec cap;
    cap.name = "cap";
    cap.type = sy::ParamType::number;
    cap.doc = "The largest magnitude a logit can reach";
    cap.def = 30.0;
    cap.min = 0;
    cap.min_exclusive = true;
    cap.max = 1000;
    cap.primary = true;
    c.params = {cap};
    c.factory = make;
    pd.components.push_back(c);
    return pd;
  }();
  return &d;
}

}  // namespace

SWITCHYARD_PLUGIN(describe)
