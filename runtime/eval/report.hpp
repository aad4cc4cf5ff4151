// What an eval reports: the thresholds it crossed, a markdown report (a table per pipeline,
// then per prompt where each pipeline's greedy output first leaves the reference's), a
// plot of the per-token KL divergence distributions (SVG) and the same figures as JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "eval/prompts.hpp"
#include "eval/runner.hpp"
#include "eval/spec.hpp"

namespace sy::eval {

/// One sentence per crossed limit: "q8-kv: top-1 agreement 0.912 is below min_top1 0.95".
std::vector<std::string> check_thresholds(const EvalSpec& spec, const std::vector<PipelineResult>& results);

/// The markdown report; `plot` (may be empty) is the SVG's path as the report links it.
std::string markdown_report(const EvalSpec& spec, const std::vector<Prompt>& prompts,
                            const std::vector<PipelineResult>& results, const std::vector<std::string>& failures,
                            const std::string& plot);

/// The KL divergence quantiles of every pipeline but the reference, as an SVG line chart.
std::string kld_plot(const std::vector<PipelineResult>& results);

/// {pipelines: [{name, reference, top1, kld: {...}, exact_match, ...}], failures: [...]}.
nlohmann::json report_json(const EvalSpec& spec, const std::vector<PipelineResult>& results,
                           const std::vector<std::string>& failures);

}  // namespace sy::eval
