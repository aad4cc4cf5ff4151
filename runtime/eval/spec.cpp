#include "eval/spec.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include <yaml-cpp/yaml.h>

#include "util/read_file.hpp"

namespace sy::eval {
namespace spec_parse {

namespace fs = std::filesystem;

struct Ctx {
  std::string name;
  fs::path dir;
  Status error(const YAML::Node& n, const std::string& what) const {
    const auto m = n.Mark();
    return error::invalid_argument(name + (m.is_null() ? "" : ":" + std::to_string(m.line + 1)) + ": " + what);
  }
};

constexpr std::array<std::pair<const char*, std::optional<double> Thresholds::*>, 6> kLimits{{
    {"min_top1", &Thresholds::min_top1},
    {"max_mean_kld", &Thresholds::max_mean_kld},
    {"max_p99_kld", &Thresholds::max_p99_kld},
    {"min_exact_match", &Thresholds::min_exact_match},
    {"min_seeded_agreement", &Thresholds::min_seeded_agreement},
    {"min_consistency", &Thresholds::min_consistency},
}};

constexpr std::array<const char*, 9> kKeys{"prompts", "max_tokens", "runs", "seed", "sampling",
                                           "reference", "pipelines", "thresholds", "description"};

Result<int64_t> integer(const Ctx& c, const YAML::Node& n, const std::string& key, int64_t lo, int64_t hi) {
  try {
    const auto v = n.as<int64_t>();
    if (v >= lo && v <= hi) return v;
  } catch (const YAML::Exception&) {
  }
  return c.error(n, "'" + key + "' must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
}

Result<std::string> text(const Ctx& c, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar() || n.Scalar().empty()) return c.error(n, "'" + key + "' must be a non-empty string");
  return n.Scalar();
}

Result<PipelineEntry> pipeline_entry(const Ctx& c, const std::string& name, const YAML::Node& n) {
  PipelineEntry e;
  e.name = name;
  const std::string where = "pipelines." + name;
  if (n.IsScalar()) {  // name: file.yaml
    e.file = c.dir / n.Scalar();
    return e;
  }
  if (!n.IsMap())
    return c.error(n, "'" + where + "' must be a pipeline file, or a mapping { pipeline: FILE, set: [KEY=VALUE, ...] }");
  for (const auto& kv : n) {
    const auto key = kv.first.Scalar();
    if (key == "pipeline") {
      auto f = text(c, kv.second, where + ".pipeline");
      if (!f) return f.status();
      e.file = c.dir / *f;
    } else if (key == "set") {
      if (!kv.second.IsSequence())
        return c.error(kv.second, "'" + where + ".set' must be a list of KEY=VALUE overrides, e.g. [ context.kv_type=q8_0 ]");
      for (const auto& s : kv.second) {
        if (!s.IsScalar() || s.Scalar().find('=') == std::string::npos)
          return c.error(s, "'" + where + ".set' items are KEY=VALUE, e.g. context.kv_type=q8_0");
        e.sets.push_back(s.Scalar());
      }
    } else {
      return c.error(kv.first, "unknown key '" + where + "." + key + "'; a pipeline entry has 'pipeline' and 'set'");
    }
  }
  if (e.file.empty()) return c.error(n, "'" + where + "' needs 'pipeline: FILE'");
  return e;
}

Result<Thresholds> thresholds(const Ctx& c, const std::string& name, const YAML::Node& n) {
  if (!n.IsMap()) return c.error(n, "'thresholds." + name + "' must be a mapping of limits (" + threshold_names() + ")");
  Thresholds t;
  for (const auto& kv : n) {
    const auto key = kv.first.Scalar();
    const auto* limit = std::find_if(kLimits.begin(), kLimits.end(), [&](const auto& l) { return key == l.first; });
    if (limit == kLimits.end())
      return c.error(kv.first, "unknown threshold '" + key + "' in 'thresholds." + name + "'; use " + threshold_names());
    double v = -1;
    try {
      v = kv.second.as<double>();
    } catch (const YAML::Exception&) {
    }
    const bool fraction = key != "max_mean_kld" && key != "max_p99_kld";
    if (!(v >= 0) || (fraction && v > 1))
      return c.error(kv.second, "'thresholds." + name + "." + key + "' must be a number " +
                                    (fraction ? std::string("from 0 to 1") : std::string("of at least 0")));
    t.*(limit->second) = v;
  }
  return t;
}

Result<EvalSpec> parse(const Ctx& c, const YAML::Node& root) {
  if (!root.IsMap()) return c.error(root, "an eval file is a mapping with 'prompts', 'reference' and 'pipelines'");
  EvalSpec s;
  for (const auto& kv : root) {
    const auto key = kv.first.Scalar();
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      std::string names;
      for (const char* k : kKeys) names += (names.empty() ? "" : ", ") + std::string(k);
      return c.error(kv.first, "unknown key '" + key + "'; an eval file has " + names);
    }
  }
  auto need = [&](const char* key) -> Result<YAML::Node> {
    if (!root[key]) return c.error(root, "'" + std::string(key) + "' is missing");
    return root[key];
  };
  auto p = need("prompts");
  if (!p) return p.status();
  auto pf = text(c, *p, "prompts");
  if (!pf) return pf.status();
  s.prompts = c.dir / *pf;
  if (root["max_tokens"]) {
    auto v = integer(c, root["max_tokens"], "max_tokens", 1, 1 << 20);
    if (!v) return v.status();
    s.max_tokens = *v;
  }
  if (root["runs"]) {
    auto v = integer(c, root["runs"], "runs", 0, 1000);
    if (!v) return v.status();
    s.runs = *v;
  }
  if (root["seed"]) {
    auto v = integer(c, root["seed"], "seed", 0, INT64_MAX / 2);
    if (!v) return v.status();
    s.seed = *v;
  }
  if (const auto& sm = root["sampling"]) {
    if (!sm.IsSequence() || sm.size() == 0)
      return c.error(sm, "'sampling' must be a sampler list as in a pipeline, e.g. [ { temperature: 0.8 }, dist ]");
    YAML::Emitter out;
    out << YAML::Flow << sm;
    s.sampling = out.c_str();
  }
  auto pl = need("pipelines");
  if (!pl) return pl.status();
  if (!pl->IsMap() || pl->size() == 0)
    return c.error(*pl, "'pipelines' must map names to pipeline files, e.g. { f16: ../demo.yaml }");
  for (const auto& kv : *pl) {
    auto e = pipeline_entry(c, kv.first.Scalar(), kv.second);
    if (!e) return e.status();
    s.pipelines.push_back(std::move(*e));
  }
  auto r = need("reference");
  if (!r) return r.status();
  auto ref = text(c, *r, "reference");
  if (!ref) return ref.status();
  s.reference = *ref;
  std::string names;
  for (const auto& e : s.pipelines) names += (names.empty() ? "" : ", ") + e.name;
  if (std::none_of(s.pipelines.begin(), s.pipelines.end(), [&](const auto& e) { return e.name == s.reference; }))
    return c.error(*r, "'reference: " + s.reference + "' names no pipeline; the pipelines are " + names);
  if (const auto& th = root["thresholds"]) {
    if (!th.IsMap()) return c.error(th, "'thresholds' must map pipeline names (or 'all') to limits");
    for (const auto& kv : th) {
      const auto name = kv.first.Scalar();
      if (name != "all" && std::none_of(s.pipelines.begin(), s.pipelines.end(), [&](const auto& e) { return e.name == name; }))
        return c.error(kv.first, "'thresholds." + name + "' names no pipeline; use 'all' or one of " + names);
      auto t = thresholds(c, name, kv.second);
      if (!t) return t.status();
      s.thresholds[name] = *t;
    }
  }
  return s;
}

}  // namespace spec_parse

bool Thresholds::empty() const {
  return std::all_of(spec_parse::kLimits.begin(), spec_parse::kLimits.end(),
                     [this](const auto& l) { return !(this->*(l.second)).has_value(); });
}

std::string threshold_names() {
  std::string s;
  for (const auto& l : spec_parse::kLimits) s += (s.empty() ? "" : ", ") + std::string(l.first);
  return s;
}

Result<EvalSpec> parse_spec(const std::string& text, const std::string& name, const std::filesystem::path& dir) {
  const spec_parse::Ctx c{name, dir};
  try {
    const YAML::Node root = YAML::Load(text);
    auto s = spec_parse::parse(c, root);
    if (s) s->file = name;
    return s;
  } catch (const YAML::Exception& e) {
    return error::invalid_argument(name + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML (" + e.msg + ")");
  }
}

Result<EvalSpec> load_spec(const std::filesystem::path& file) {
  auto t = util::read_file(file, "the eval file");
  if (!t) return t.status();
  return parse_spec(*t, file.string(), file.parent_path());
}

}  // namespace sy::eval
