// Factories of the samplers plugin, one per component.
#pragma once

#include "switchyard/plugin.hpp"
#include "switchyard/sampler.hpp"

namespace sy::samplers {

Result<std::unique_ptr<Component>> make_greedy(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_dist(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_temperature(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_top_k(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_top_p(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_min_p(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_repetition_penalty(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_typical_p(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_xtc(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_logit_bias(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_presence_penalty(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_frequency_penalty(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_dry(const ParamMap& p) noexcept;
Result<std::unique_ptr<Component>> make_mirostat_v2(const ParamMap& p) noexcept;

}  // namespace sy::samplers
