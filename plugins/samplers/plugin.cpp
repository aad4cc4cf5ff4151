// The samplers plugin's descriptor: one library, one component per sampler.
#include "samplers.hpp"

namespace sy::samplers {
namespace {

ComponentDesc sampler(std::string name, std::string summary, std::vector<ParamSpec> params, ComponentFactory f) {
  ComponentDesc c;
  c.kind = ComponentKind::sampler;
  c.name = std::move(name);
  c.version = "1.0.0";
  c.summary = std::move(summary);
  c.params = std::move(params);
  c.factory = f;
  return c;
}

ParamSpec min_keep() {
  ParamSpec p{"min_keep", ParamType::integer, "Never keep fewer candidates than this", int64_t{1}};
  p.min = 1;
  p.max = 1e6;
  return p;
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "samplers";
    pd.version = "0.1.0";
    pd.summary = "Token samplers for the pipeline's sampling chain";

    pd.components.push_back(sampler("greedy", "Pick the highest-logit token", {}, make_greedy));

    ParamSpec seed{"seed", ParamType::integer, "RNG seed; the same seed and logits give the same token everywhere",
                   std::string("random")};
    seed.min = 0;
    seed.max = 9.2e18;
    seed.choices = {"random"};
    seed.primary = true;
    pd.components.push_back(sampler("dist", "Draw a token from softmax(logits)", {seed}, make_dist));

    ParamSpec t{"t", ParamType::number, "Divide logits by t; 0 keeps only the best token", 0.8};
    t.min = 0;
    t.max = 100;
    t.primary = true;
    pd.components.push_back(sampler("temperature", "Scale logits by 1/t", {t}, make_temperature));

    ParamSpec k{"k", ParamType::integer, "Keep the k best tokens; 0 disables", int64_t{40}};
    k.min = 0;
    k.max = 1e9;
    k.primary = true;
    pd.components.push_back(sampler("top_k", "Keep the k most likely tokens", {k}, make_top_k));

    ParamSpec p{"p", ParamType::number, "Keep the smallest set of tokens whose probability reaches p", 0.95};
    p.min = 0;
    p.min_exclusive = true;
    p.max = 1;
    p.primary = true;
    pd.components.push_back(sampler("top_p", "Nucleus sampling", {p, min_keep()}, make_top_p));

    ParamSpec mp{"p", ParamType::number, "Drop tokens less likely than p times the best token's probability", 0.05};
    mp.min = 0;
    mp.max = 1;
    mp.primary = true;
    pd.components.push_back(sampler("min_p", "Drop tokens far less likely than the best", {mp, min_keep()}, make_min_p));

    ParamSpec pen{"penalty", ParamType::number, "Divide positive (multiply negative) logits of recent tokens", 1.0};
    pen.min = 0;
    pen.min_exclusive = true;
    pen.max = 10;
    pen.primary = true;
    ParamSpec last_n{"last_n", ParamType::integer, "How many recent tokens count; -1 = the whole context", int64_t{64}};
    last_n.min = -1;
    last_n.max = 1e9;
    pd.components.push_back(sampler("repetition_penalty", "Penalise recently seen tokens", {pen, last_n},
                                    make_repetition_penalty));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::samplers

SWITCHYARD_PLUGIN(sy::samplers::describe)
