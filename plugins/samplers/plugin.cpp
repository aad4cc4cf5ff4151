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

    ParamSpec tp{"p", ParamType::number, "Keep the tokens closest to the expected surprise until their mass reaches p; 1 disables", 1.0};
    tp.min = 0;
    tp.min_exclusive = true;
    tp.max = 1;
    tp.primary = true;
    pd.components.push_back(sampler("typical_p", "Locally typical sampling", {tp, min_keep()}, make_typical_p));

    auto count_penalty = [&](const char* name, const char* doc, ComponentFactory f) {
      ParamSpec pp{"penalty", ParamType::number, doc, 0.0};
      pp.min = -2;
      pp.max = 2;
      pp.primary = true;
      pd.components.push_back(sampler(name, doc, {pp, last_n}, f));
    };
    count_penalty("presence_penalty", "Subtract the penalty from every token already present (OpenAI's presence_penalty)",
                  make_presence_penalty);
    count_penalty("frequency_penalty", "Subtract the penalty times each token's count (OpenAI's frequency_penalty)",
                  make_frequency_penalty);

    ParamSpec bias{"bias", ParamType::string_list, "Entries TOKEN_ID:BIAS added to logits, e.g. [\"15043:+2.5\", \"2:-inf\"]",
                   std::vector<std::string>{}};
    bias.primary = true;
    pd.components.push_back(sampler("logit_bias", "Add fixed biases to chosen tokens' logits", {bias}, make_logit_bias));

    ParamSpec tau{"tau", ParamType::number, "Target surprise (bits) of each token", 5.0};
    tau.min = 0;
    tau.max = 100;
    tau.primary = true;
    ParamSpec eta{"eta", ParamType::number, "Learning rate of the surprise controller", 0.1};
    eta.min = 0;
    eta.min_exclusive = true;
    eta.max = 1;
    pd.components.push_back(sampler("mirostat_v2", "Mirostat 2.0: pick tokens at a steady surprise (terminal)",
                                     {tau, eta, seed}, make_mirostat_v2));

    ParamSpec xp{"probability", ParamType::number, "Chance that XTC acts on a step", 0.5};
    xp.min = 0;
    xp.max = 1;
    xp.primary = true;
    ParamSpec xt{"threshold", ParamType::number, "Tokens at least this likely count as top choices (above 0.5 disables)", 0.1};
    xt.min = 0;
    xt.max = 1;
    pd.components.push_back(sampler("xtc", "Exclude top choices but the least likely of them", {xp, xt, min_keep(), seed}, make_xtc));

    ParamSpec mult{"multiplier", ParamType::number, "Penalty scale; 0 disables", 0.8};
    mult.min = 0;
    mult.max = 100;
    mult.primary = true;
    ParamSpec base{"base", ParamType::number, "Growth of the penalty per extra repeated token", 1.75};
    base.min = 1;
    base.max = 10;
    ParamSpec allowed{"allowed_length", ParamType::integer, "Repeats up to this many tokens go unpunished", int64_t{2}};
    allowed.min = 1;
    allowed.max = 1e6;
    ParamSpec dry_n{"last_n", ParamType::integer, "How many recent tokens count; -1 = the whole context", int64_t{-1}};
    dry_n.min = -1;
    dry_n.max = 1e9;
    ParamSpec breakers{"sequence_breakers", ParamType::string_list, "Token texts that end a repeated sequence",
                       std::vector<std::string>{"\n", ":", "\"", "*"}};
    pd.components.push_back(sampler("dry", "Penalise tokens that extend a repeated sequence (DRY)",
                                    {mult, base, allowed, dry_n, breakers}, make_dry));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::samplers

SWITCHYARD_PLUGIN(sy::samplers::describe)
