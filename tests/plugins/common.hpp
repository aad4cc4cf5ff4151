// Shared bits of the test plugins: a trivial sampler and a descriptor builder.
#pragma once

#include "switchyard/plugin.hpp"
#include "switchyard/sampler.hpp"

namespace sy::testplugins {

/// Sets `selected` to a fixed id: enough to prove the object came from this library.
class FixedSampler final : public Sampler {
 public:
  explicit FixedSampler(int32_t id) : id_(id) {}
  Status apply(CandidateList& c, const SamplerContext&) noexcept override {
    c.selected = id_;
    return Status::ok();
  }

 private:
  int32_t id_;
};

inline Result<std::unique_ptr<Component>> make_fixed(const ParamMap& p) noexcept {
  return guard_factory([&]() -> Result<std::unique_ptr<Component>> {
    return std::make_unique<FixedSampler>(static_cast<int32_t>(p.get_int("id").value_or(7)));
  });
}

inline ComponentDesc fixed_sampler(std::string name) {
  ComponentDesc c;
  c.kind = ComponentKind::sampler;
  c.name = std::move(name);
  c.version = "1.0.0";
  c.summary = "test sampler";
  ParamSpec id{"id", ParamType::integer, "the id it selects", int64_t{7}};
  id.min = 0;
  id.max = 1000;
  id.primary = true;
  c.params = {id};
  c.factory = make_fixed;
  return c;
}

}  // namespace sy::testplugins
