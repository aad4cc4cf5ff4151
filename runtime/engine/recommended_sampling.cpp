#include "engine/recommended_sampling.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace sy::engine {
namespace {

// A sampler of the chain with every parameter at its manifest default (the chain the
// validator would have built from the bare name).
std::optional<pipeline::ComponentConfig> with_defaults(const std::string& name, const registry::Registry& reg) {
  const auto* rec = reg.find(ComponentKind::sampler, name);
  if (!rec) return std::nullopt;
  pipeline::ComponentConfig c;
  c.name = name;
  for (const auto& p : reg.manifest(*rec).params)
    if (p.def) c.params.set(p.name, *p.def);
  return c;
}

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::string apply_recommended_sampling(std::vector<pipeline::ComponentConfig>& chain, const Metadata& md,
                                       const registry::Registry& reg) {
  struct Key {
    const char* sampler;
    const char* param;
    const char* key;
    bool integer;
  };
  static constexpr Key kKeys[] = {{"top_k", "k", "general.sampling.top_k", true},
                                  {"top_p", "p", "general.sampling.top_p", false},
                                  {"min_p", "p", "general.sampling.min_p", false},
                                  {"temperature", "t", "general.sampling.temp", false}};
  std::string changed;
  const auto note = [&](const std::string& what) { changed += (changed.empty() ? "" : ", ") + what; };
  const bool all_builtin =
      !chain.empty() && std::all_of(chain.begin(), chain.end(), [](const auto& c) { return c.builtin; });
  if (all_builtin && md.get_bool("general.sampling.do_sample") == false) {
    if (auto greedy = with_defaults("greedy", reg)) {
      greedy->builtin = true;
      chain = {std::move(*greedy)};
      return "greedy decoding (do_sample false)";
    }
  }
  for (auto& c : chain) {
    if (!c.builtin) continue;
    for (const auto& k : kKeys) {
      if (c.name != k.sampler) continue;
      if (k.integer) {
        const auto v = md.get_int(k.key);
        if (!v || *v < 0) continue;
        c.params.set(k.param, *v);
        note(c.name + " " + std::to_string(*v));
      } else {
        const auto v = md.get_float(k.key);
        // Outside the sampler's own range (e.g. top_p 0) the value is not used.
        if (!v || !std::isfinite(*v) || *v < 0 || (k.param[0] == 'p' && (*v <= 0 || *v > 1))) continue;
        c.params.set(k.param, *v);
        note(c.name + " " + number_text(*v));
      }
    }
  }
  if (all_builtin) {
    const auto rp = md.get_float("general.sampling.penalty_repeat");
    if (rp && std::isfinite(*rp) && *rp > 0 && *rp <= 10 && *rp != 1.0)
      if (auto pen = with_defaults("repetition_penalty", reg)) {
        pen->params.set("penalty", *rp);
        pen->builtin = true;
        chain.insert(chain.begin(), std::move(*pen));
        note("repetition_penalty " + number_text(*rp));
      }
  }
  return changed;
}

}  // namespace sy::engine
