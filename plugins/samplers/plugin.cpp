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

// A sampler that picks the token (sets CandidateList::selected): it must end the chain.
ComponentDesc terminal(ComponentDesc c) {
  c.traits.push_back(kTraitTerminal);
  return c;
}

// A number or integer in [lo, hi]; `primary` takes the shorthand `{ name: value }`.
ParamSpec ranged(std::string name, ParamType type, std::string doc, ParamValue def, double lo, double hi,
                 bool primary = false) {
  ParamSpec p{std::move(name), type, std::move(doc), std::move(def)};
  p.min = lo;
  p.max = hi;
  p.primary = primary;
  return p;
}

// The same, strictly above lo: probabilities and divisors where 0 means nothing.
ParamSpec above(std::string name, std::string doc, double def, double lo, double hi, bool primary = false) {
  ParamSpec p = ranged(std::move(name), ParamType::number, std::move(doc), def, lo, hi, primary);
  p.min_exclusive = true;
  return p;
}

ParamSpec min_keep() {
  return ranged("min_keep", ParamType::integer, "Never keep fewer candidates than this", int64_t{1}, 1, 1e6);
}

const PluginDescriptor* describe() noexcept {
  static const PluginDescriptor d = [] {
    PluginDescriptor pd;
    pd.name = "samplers";
    pd.version = "0.1.0";
    pd.summary = "Token samplers for the pipeline's sampling chain";

    pd.components.push_back(terminal(sampler("greedy", "Pick the highest-logit token", {}, make_greedy)));

    ParamSpec seed = ranged("seed", ParamType::integer, "RNG seed; the same seed and logits give the same token everywhere",
                            std::string("random"), 0, 9.2e18, true);
    seed.choices = {"random"};
    pd.components.push_back(terminal(sampler("dist", "Draw a token from softmax(logits)", {seed}, make_dist)));

    pd.components.push_back(sampler(
        "temperature", "Scale logits by 1/t",
        {ranged("t", ParamType::number, "Divide logits by t; 0 keeps only the best token", 0.8, 0, 100, true)},
        make_temperature));
    pd.components.push_back(sampler(
        "top_k", "Keep the k most likely tokens",
        {ranged("k", ParamType::integer, "Keep the k best tokens; 0 disables", int64_t{40}, 0, 1e9, true)}, make_top_k));
    pd.components.push_back(sampler(
        "top_p", "Nucleus sampling",
        {above("p", "Keep the smallest set of tokens whose probability reaches p", 0.95, 0, 1, true), min_keep()},
        make_top_p));
    pd.components.push_back(sampler(
        "min_p", "Drop tokens far less likely than the best",
        {ranged("p", ParamType::number, "Drop tokens less likely than p times the best token's probability", 0.05, 0, 1,
                true),
         min_keep()},
        make_min_p));

    const ParamSpec last_n = ranged("last_n", ParamType::integer, "How many recent tokens count; -1 = the whole context",
                                    int64_t{64}, -1, 1e9);
    pd.components.push_back(sampler(
        "repetition_penalty", "Penalise recently seen tokens",
        {above("penalty", "Divide positive (multiply negative) logits of recent tokens", 1.0, 0, 10, true), last_n},
        make_repetition_penalty));
    pd.components.push_back(sampler(
        "typical_p", "Locally typical sampling",
        {above("p", "Keep the tokens closest to the expected surprise until their mass reaches p; 1 disables", 1.0, 0, 1,
               true),
         min_keep()},
        make_typical_p));

    auto count_penalty = [&](const char* name, const char* doc, ComponentFactory f) {
      pd.components.push_back(
          sampler(name, doc, {ranged("penalty", ParamType::number, doc, 0.0, -2, 2, true), last_n}, f));
    };
    count_penalty("presence_penalty", "Subtract the penalty from every token already present (OpenAI's presence_penalty)",
                  make_presence_penalty);
    count_penalty("frequency_penalty", "Subtract the penalty times each token's count (OpenAI's frequency_penalty)",
                  make_frequency_penalty);

    ParamSpec bias{"bias", ParamType::string_list, "Entries TOKEN_ID:BIAS added to logits, e.g. [\"15043:+2.5\", \"2:-inf\"]",
                   std::vector<std::string>{}};
    bias.primary = true;
    // Exactly the forms make_logit_bias reads: a decimal id, ':', then a signed decimal or
    // exponent number, or -inf (any case, "-infinity" too); +inf and nan are refused there.
    bias.pattern = R"(\+?[0-9]+:(-[iI][nN][fF]([iI][nN][iI][tT][yY])?|[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?))";
    bias.pattern_hint = "TOKEN_ID:BIAS such as '15043:+2.5' or '2:-inf'";
    bias.token_ids = true;
    pd.components.push_back(sampler("logit_bias", "Add fixed biases to chosen tokens' logits", {bias}, make_logit_bias));

    pd.components.push_back(terminal(sampler(
        "mirostat_v2", "Mirostat 2.0: pick tokens at a steady surprise (terminal)",
        {ranged("tau", ParamType::number, "Target surprise (bits) of each token", 5.0, 0, 100, true),
         above("eta", "Learning rate of the surprise controller", 0.1, 0, 1), seed},
        make_mirostat_v2)));

    pd.components.push_back(sampler(
        "xtc", "Exclude top choices but the least likely of them",
        {ranged("probability", ParamType::number, "Chance that XTC acts on a step", 0.5, 0, 1, true),
         ranged("threshold", ParamType::number, "Tokens at least this likely count as top choices (above 0.5 disables)",
                0.1, 0, 1),
         min_keep(), seed},
        make_xtc));

    ParamSpec breakers{"sequence_breakers", ParamType::string_list, "Token texts that end a repeated sequence",
                       std::vector<std::string>{"\n", ":", "\"", "*"}};
    pd.components.push_back(sampler(
        "dry", "Penalise tokens that extend a repeated sequence (DRY)",
        {ranged("multiplier", ParamType::number, "Penalty scale; 0 disables", 0.8, 0, 100, true),
         ranged("base", ParamType::number, "Growth of the penalty per extra repeated token", 1.75, 1, 10),
         ranged("allowed_length", ParamType::integer, "Repeats up to this many tokens go unpunished", int64_t{2}, 1, 1e6),
         ranged("last_n", ParamType::integer, "How many recent tokens count; -1 = the whole context", int64_t{-1}, -1, 1e9),
         breakers},
        make_dry));
    return pd;
  }();
  return &d;
}

}  // namespace
}  // namespace sy::samplers

SWITCHYARD_PLUGIN(sy::samplers::describe)
