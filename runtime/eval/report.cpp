#include "eval/report.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "bench/svg_plot.hpp"
#include "switchyard/utf8.hpp"

namespace sy::eval {
namespace eval_report {

std::string num(double v, const char* fmt = "%.4g") {
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string fraction(double v) { return v < 0 ? "-" : num(v, "%.3f"); }

// The limits that apply to a pipeline: its own, else "all" (never the reference's).
const Thresholds* limits_for(const EvalSpec& spec, const PipelineResult& r) {
  if (auto it = spec.thresholds.find(r.name); it != spec.thresholds.end()) return &it->second;
  if (r.reference) return nullptr;
  if (auto it = spec.thresholds.find("all"); it != spec.thresholds.end()) return &it->second;
  return nullptr;
}

// Model output as a markdown table cell: invalid UTF-8 escaped, control characters as
// spaces, and nothing markdown or HTML would read as markup (a random model writes <unk>).
std::string cell(const std::string& raw, size_t max = 60) {
  std::string s = escape_invalid_utf8(raw);
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // a whole UTF-8 character
    s = s.substr(0, cut) + "...";
  }
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) out += ' ';
    else if (c == '|') out += "\\|";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '`' || c == '*' || c == '_' || c == '[' || c == ']' || c == '\\') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

}  // namespace eval_report

using namespace eval_report;

std::vector<std::string> check_thresholds(const EvalSpec& spec, const std::vector<PipelineResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) {
    const Thresholds* t = limits_for(spec, r);
    if (!t) continue;
    auto below = [&](const std::optional<double>& limit, double value, const char* what, const char* key) {
      if (limit && value >= 0 && value < *limit)
        out.push_back(r.name + ": " + what + " " + num(value) + " is below " + key + " " + num(*limit));
      if (limit && value < 0)
        out.push_back(r.name + ": " + key + " is set but the eval measured no " + what + " (runs: " +
                      std::to_string(spec.runs) + ")");
    };
    auto above = [&](const std::optional<double>& limit, double value, const char* what, const char* key) {
      if (limit && value > *limit) out.push_back(r.name + ": " + what + " " + num(value) + " is above " + key + " " + num(*limit));
    };
    below(t->min_top1, r.kld.same_top, "top-1 agreement", "min_top1");
    above(t->max_mean_kld, r.kld.kld.mean, "mean KL divergence", "max_mean_kld");
    above(t->max_p99_kld, r.kld.kld_p99, "99th percentile KL divergence", "max_p99_kld");
    below(t->min_exact_match, r.exact_match, "exact match", "min_exact_match");
    below(t->min_seeded_agreement, r.seeded_agreement, "seeded agreement", "min_seeded_agreement");
    below(t->min_consistency, r.consistency, "consistency", "min_consistency");
  }
  return out;
}

std::string markdown_report(const EvalSpec& spec, const std::vector<Prompt>& prompts,
                            const std::vector<PipelineResult>& results, const std::vector<std::string>& failures,
                            const std::string& plot) {
  std::string md = "# Eval: " + spec.file.filename().string() + "\n\n";
  md += std::to_string(prompts.size()) + " prompts from `" + spec.prompts.filename().string() + "`, " +
        std::to_string(spec.max_tokens) + " tokens each; " + std::to_string(spec.runs) + " sampled runs per prompt (seeds " +
        std::to_string(spec.seed) + ".." + std::to_string(spec.seed + std::max<int64_t>(spec.runs, 1) - 1) +
        "). Reference: **" + spec.reference + "**. Every pipeline is teacher-forced on the reference's greedy "
        "output, so the KL divergence and top-1 agreement compare distributions over the same tokens.\n\n";
  md += failures.empty() ? "**Result: pass** (every threshold held)\n\n"
                         : "**Result: FAIL** (" + std::to_string(failures.size()) + " thresholds crossed)\n\n";
  for (const auto& f : failures) md += "- " + f + "\n";
  if (!failures.empty()) md += "\n";
  md += "| pipeline | top-1 | mean KLD | median KLD | p99 KLD | max KLD | PPL ratio | exact match | common prefix | "
        "seeded agreement | consistency | prompt tok/s | gen tok/s |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : results) {
    md += "| " + r.name + (r.reference ? " (reference)" : "") + " | " + fraction(r.kld.same_top) + " | " +
          num(r.kld.kld.mean) + " | " + num(r.kld.kld_median) + " | " + num(r.kld.kld_p99) + " | " + num(r.kld.kld_max) +
          " | " + num(r.kld.ppl_ratio, "%.4f") + " | " + fraction(r.exact_match) + " | " + num(r.common_prefix, "%.1f") +
          " | " + fraction(r.seeded_agreement) + " | " + fraction(r.consistency) + " | " + num(r.prompt_tps(), "%.1f") +
          " | " + num(r.generation_tps(), "%.1f") + " |\n";
  }
  md += "\nKLD: KL divergence of each pipeline's next-token distribution from the reference's, in nats per token "
        "(" + std::to_string(results.empty() ? 0 : results.front().scored_tokens) + " tokens). Top-1: the most "
        "likely token agrees. Exact match: prompts whose greedy output equals the reference's; common prefix: tokens "
        "before it first differs. Seeded agreement: sampled runs equal to the reference's with the same seed; "
        "consistency: pairs of one prompt's sampled runs that are equal. Speeds are informational (one process, "
        "one prompt at a time).\n\n";
  if (!plot.empty()) md += "![KL divergence per token](" + plot + ")\n\n";

  md += "## Per prompt\n\nWhere each pipeline's greedy output first differs from the reference's (`=`: identical).\n\n";
  md += "| prompt | reference output |";
  for (const auto& r : results)
    if (!r.reference) md += " " + r.name + " |";
  md += "\n|---|---|";
  for (const auto& r : results)
    if (!r.reference) md += "---|";
  md += "\n";
  const PipelineResult* ref = nullptr;
  for (const auto& r : results)
    if (r.reference) ref = &r;
  for (size_t i = 0; ref && i < prompts.size() && i < ref->prompts.size(); ++i) {
    md += "| " + cell(prompts[i].id, 30) + " | " + cell(ref->prompts[i].greedy_text) + " |";
    for (const auto& r : results) {
      if (r.reference) continue;
      if (i >= r.prompts.size()) {
        md += " - |";
        continue;
      }
      const auto& a = r.prompts[i].greedy;
      const auto& b = ref->prompts[i].greedy;
      if (a == b) {
        md += " = |";
        continue;
      }
      const auto d = static_cast<size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
      md += " token " + std::to_string(d) + ": " + cell(r.prompts[i].greedy_text, 40) + " |";
    }
    md += "\n";
  }
  return md;
}

std::string kld_plot(const std::vector<PipelineResult>& results) {
  std::vector<bench::PlotSeries> series;
  for (const auto& r : results) {
    if (r.reference || r.kld.count == 0) continue;
    const auto& k = r.kld;
    bench::PlotSeries s;
    s.label = r.name;
    const std::pair<double, double> q[] = {{0, k.kld_min},     {1, k.kld_p1},     {5, k.kld_p5},    {10, k.kld_p10},
                                           {50, k.kld_median}, {90, k.kld_p90},   {95, k.kld_p95},  {99, k.kld_p99},
                                           {99.9, k.kld_p999}, {100, k.kld_max}};
    for (const auto& [x, y] : q) s.points.push_back({x, y, 0});
    series.push_back(std::move(s));
  }
  return bench::svg_line_chart(series, {"KL divergence from the reference, per token", "percentile of tokens",
                                        "KL divergence (nats)"});
}

nlohmann::json report_json(const EvalSpec& spec, const std::vector<PipelineResult>& results,
                           const std::vector<std::string>& failures) {
  nlohmann::json j;
  j["eval"] = spec.file.string();
  j["reference"] = spec.reference;
  j["pipelines"] = nlohmann::json::array();
  auto opt = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  for (const auto& r : results) {
    const auto& k = r.kld;
    j["pipelines"].push_back({{"name", r.name},
                              {"reference", r.reference},
                              {"scored_tokens", r.scored_tokens},
                              {"top1", k.same_top},
                              {"kld", {{"mean", k.kld.mean}, {"median", k.kld_median}, {"p90", k.kld_p90},
                                       {"p99", k.kld_p99}, {"max", k.kld_max}}},
                              {"ppl_ratio", k.ppl_ratio},
                              {"exact_match", r.exact_match},
                              {"common_prefix", r.common_prefix},
                              {"seeded_agreement", opt(r.seeded_agreement)},
                              {"consistency", opt(r.consistency)},
                              {"prompt_tokens_per_second", r.prompt_tps()},
                              {"generation_tokens_per_second", r.generation_tps()}});
  }
  j["failures"] = failures;
  j["pass"] = failures.empty();
  return j;
}

}  // namespace sy::eval
