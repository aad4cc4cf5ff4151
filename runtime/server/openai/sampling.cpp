#include "server/openai/sampling.hpp"

#include <algorithm>
#include <sstream>

namespace sy::server::openai {
namespace {

// Where a sampler goes when the chain lacks it: lower ranks come first.
int rank_of(const std::string& name) {
  static const std::vector<std::string> order{"logit_bias", "repetition_penalty", "presence_penalty", "frequency_penalty",
                                              "top_k",      "top_p",              "min_p",            "temperature"};
  const auto it = std::find(order.begin(), order.end(), name);
  return it == order.end() ? 100 : static_cast<int>(it - order.begin());
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

class Builder {
 public:
  Builder(const SamplerSchemas& schemas, std::vector<pipeline::ComponentConfig>& chain) : schemas_(schemas), chain_(chain) {}

  // Sets sampler `name`'s parameter `param` to v (adding the sampler when absent).
  std::optional<ApiError> set(const std::string& field, const std::string& name, const std::string& param, ParamValue v) {
    const auto it = schemas_.params.find(name);
    if (it == schemas_.params.end())
      return ApiError{400, "'" + field + "' needs the '" + name + "' sampler, which is not installed on this server.",
                      "invalid_request_error", field, "unsupported_value"};
    const auto spec = std::find_if(it->second.begin(), it->second.end(), [&](const ParamSpec& s) { return s.name == param; });
    if (spec != it->second.end())
      if (auto e = check(field, name, *spec, v)) return e;
    auto c = std::find_if(chain_.begin(), chain_.end(), [&](const auto& x) { return x.name == name; });
    if (c == chain_.end()) {
      pipeline::ComponentConfig fresh;
      fresh.name = name;
      for (const auto& s : it->second)
        if (s.def) fresh.params.set(s.name, *s.def);
      // Before the first sampler ranked after it (the terminal ranks last).
      const int r = rank_of(name);
      auto pos = std::find_if(chain_.begin(), chain_.end(), [&](const auto& x) { return rank_of(x.name) > r; });
      c = chain_.insert(pos, std::move(fresh));
    }
    c->params.set(param, std::move(v));
    return std::nullopt;
  }

 private:
  static std::optional<ApiError> check(const std::string& field, const std::string& name, const ParamSpec& s,
                                       const ParamValue& v) {
    double x = 0;
    if (const auto* d = std::get_if<double>(&v)) x = *d;
    else if (const auto* i = std::get_if<int64_t>(&v)) x = static_cast<double>(*i);
    else return std::nullopt;
    const bool low = s.min && (s.min_exclusive ? x <= *s.min : x < *s.min);
    const bool high = s.max && x > *s.max;
    if (!low && !high) return std::nullopt;
    std::string range = s.min ? (s.min_exclusive ? "above " : "at least ") + num(*s.min) : std::string();
    if (s.max) range += (range.empty() ? "at most " : " and at most ") + num(*s.max);
    return ApiError{400, "'" + field + "' must be " + range + " (the " + name + " sampler's '" + s.name + "'), got " + num(x) + ".",
                    "invalid_request_error", field, "invalid_value"};
  }

  const SamplerSchemas& schemas_;
  std::vector<pipeline::ComponentConfig>& chain_;
};

}  // namespace

SamplerSchemas SamplerSchemas::from(const registry::Registry& reg) {
  SamplerSchemas s;
  for (const auto& rec : reg.components()) {
    const auto& m = reg.manifest(rec);
    if (m.kind == ComponentKind::sampler) s.params[m.name] = m.params;
  }
  return s;
}

std::optional<ApiError> apply_sampling(const SamplingFields& f, const std::vector<pipeline::ComponentConfig>& base,
                                       const SamplerSchemas& schemas, int64_t n_vocab,
                                       std::vector<pipeline::ComponentConfig>& out) {
  out = base;
  Builder b(schemas, out);
  if (f.temperature && *f.temperature == 0) {
    // Greedy decoding, as llama-server and vLLM read temperature 0: the shaping samplers
    // and the random draw go, the penalties and biases stay.
    std::vector<pipeline::ComponentConfig> kept;
    for (const auto& c : out)
      if (rank_of(c.name) < rank_of("top_k")) kept.push_back(c);
    if (schemas.params.find("greedy") == schemas.params.end())
      return ApiError{400, "'temperature' 0 needs the greedy sampler, which is not installed on this server.",
                      "invalid_request_error", "temperature", "unsupported_value"};
    pipeline::ComponentConfig g;
    g.name = "greedy";
    kept.push_back(g);
    out = std::move(kept);
  } else if (f.temperature) {
    if (auto e = b.set("temperature", "temperature", "t", *f.temperature)) return e;
  }
  const bool greedy = f.temperature && *f.temperature == 0;
  if (!greedy) {
    if (f.top_k)
      if (auto e = b.set("top_k", "top_k", "k", *f.top_k)) return e;
    if (f.top_p)
      if (auto e = b.set("top_p", "top_p", "p", *f.top_p)) return e;
    if (f.min_p)
      if (auto e = b.set("min_p", "min_p", "p", *f.min_p)) return e;
  }
  if (f.presence_penalty)
    if (auto e = b.set("presence_penalty", "presence_penalty", "penalty", *f.presence_penalty)) return e;
  if (f.frequency_penalty)
    if (auto e = b.set("frequency_penalty", "frequency_penalty", "penalty", *f.frequency_penalty)) return e;
  if (f.repetition_penalty)
    if (auto e = b.set("repetition_penalty", "repetition_penalty", "penalty", *f.repetition_penalty)) return e;
  if (!f.logit_bias.empty()) {
    std::vector<std::string> items;
    for (const auto& [id, bias] : f.logit_bias) {
      if (id >= n_vocab)
        return ApiError{400, "'logit_bias' names token " + std::to_string(id) + ", outside the vocabulary (0.." +
                                 std::to_string(n_vocab - 1) + ").",
                        "invalid_request_error", "logit_bias", "invalid_value"};
      items.push_back(std::to_string(id) + ":" + num(bias));
    }
    if (auto e = b.set("logit_bias", "logit_bias", "bias", items)) return e;
  }
  if (f.seed)
    for (auto& c : out)
      if (c.params.find("seed")) c.params.set("seed", *f.seed);
  return std::nullopt;
}

}  // namespace sy::server::openai
