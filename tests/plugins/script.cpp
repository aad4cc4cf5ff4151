// A sampler that ignores the logits and picks scripted ids, one per generated token (the
// last one repeats): the server tests use it to make a model "say" an exact text, such as
// a tool call, so the parsing and the protocol around it are checked end to end.
#include "switchyard/plugin.hpp"
#include "switchyard/sampler.hpp"

namespace {

class Script final : public sy::Sampler {
 public:
  explicit Script(std::vector<int64_t> ids) : ids_(std::move(ids)) {}
  sy::Status apply(sy::CandidateList& c, const sy::SamplerContext& ctx) noexcept override {
    if (ids_.empty()) return sy::error::invalid_argument("script: 'ids' is empty");
    const size_t i = std::min(ctx.output.size(), ids_.size() - 1);
    c.selected = static_cast<int32_t>(ids_[i]);
    return sy::Status::ok();
  }

 private:
  std::vector<int64_t> ids_;
};

const sy::PluginDescriptor* describe() noexcept {
  static const sy::PluginDescriptor d = [] {
    sy::PluginDescriptor pd;
    pd.name = "test-script";
    pd.version = "1.0.0";
    sy::ComponentDesc c;
    c.kind = sy::ComponentKind::sampler;
    c.name = "script";
    c.version = "1.0.0";
    c.summary = "Pick scripted token ids in turn (tests)";
    c.traits = {"terminal"};
    sy::ParamSpec ids{"ids", sy::ParamType::integer_list, "the ids to pick, one per generated token", std::vector<int64_t>{}};
    ids.min = 0;
    ids.max = 1e9;
    ids.primary = true;
    c.params = {ids};
    c.factory = [](const sy::ParamMap& p) noexcept -> sy::Result<std::unique_ptr<sy::Component>> {
      return sy::guard_factory([&]() -> sy::Result<std::unique_ptr<sy::Component>> {
        auto v = p.find("ids");
        return std::make_unique<Script>(v ? std::get<std::vector<int64_t>>(*v) : std::vector<int64_t>{});
      });
    };
    pd.components.push_back(std::move(c));
    return pd;
  }();
  return &d;
}

}  // namespace
SWITCHYARD_PLUGIN(describe)
