// `switchyard eval` without a model (runtime/eval): the eval file's keys and its errors, the
// prompt set, the agreement metrics from hand-made outcomes (counted by hand below), the
// thresholds' sentences and the report's shape.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "eval/report.hpp"

namespace eval_test {

namespace ev = sy::eval;

const char* kGood = R"(
prompts: p.jsonl
max_tokens: 16
runs: 4
seed: 9
sampling: [ { temperature: 0.7 }, dist ]
reference: base
pipelines:
  base: base.yaml
  q8: { pipeline: base.yaml, set: [ context.kv_type=q8_0 ] }
thresholds:
  all: { min_top1: 0.9, max_mean_kld: 0.01 }
  q8: { min_exact_match: 0.5 }
)";

std::string error_of(const std::string& text) {
  auto s = ev::parse_spec(text, "e.yaml", "/cfg");
  REQUIRE(!s);
  return s.status().message();
}

ev::PromptOutcome outcome(std::vector<int32_t> greedy, std::vector<std::vector<int32_t>> sampled = {}) {
  ev::PromptOutcome o;
  o.greedy = std::move(greedy);
  o.sampled = std::move(sampled);
  return o;
}

}  // namespace eval_test

using namespace eval_test;

TEST_CASE("eval: an eval file's keys", "[eval]") {
  auto s = ev::parse_spec(kGood, "e.yaml", "/cfg");
  INFO(s.status().message());
  REQUIRE(s);
  CHECK(s->prompts == "/cfg/p.jsonl");
  CHECK(s->max_tokens == 16);
  CHECK(s->runs == 4);
  CHECK(s->seed == 9);
  CHECK(s->sampling.find("temperature") != std::string::npos);
  CHECK(s->reference == "base");
  REQUIRE(s->pipelines.size() == 2);
  CHECK(s->pipelines[0].file == "/cfg/base.yaml");
  CHECK(s->pipelines[1].name == "q8");
  CHECK(s->pipelines[1].sets == std::vector<std::string>{"context.kv_type=q8_0"});
  CHECK(s->thresholds.at("all").min_top1 == 0.9);
  CHECK(s->thresholds.at("q8").min_exact_match == 0.5);
  CHECK(!s->thresholds.at("q8").min_top1);
}

TEST_CASE("eval: an eval file's errors name the line, the key and the fix", "[eval]") {
  CHECK_THAT(error_of("prompts: p.jsonl\nreference: a\npipelines: { a: x.yaml }\nrun: 3\n"),
             Catch::Contains("e.yaml:4: unknown key 'run'") && Catch::Contains("runs"));
  CHECK_THAT(error_of("reference: a\npipelines: { a: x.yaml }\n"), Catch::Contains("'prompts' is missing"));
  CHECK_THAT(error_of("prompts: p\nreference: b\npipelines: { a: x.yaml }\n"),
             Catch::Contains("e.yaml:2: 'reference: b' names no pipeline; the pipelines are a"));
  CHECK_THAT(error_of("prompts: p\nreference: a\npipelines: { a: x.yaml }\nmax_tokens: 0\n"),
             Catch::Contains("'max_tokens' must be an integer from 1"));
  CHECK_THAT(error_of("prompts: p\nreference: a\npipelines: { a: x.yaml }\nthresholds: { a: { min_top: 1 } }\n"),
             Catch::Contains("unknown threshold 'min_top'") && Catch::Contains("min_top1"));
  CHECK_THAT(error_of("prompts: p\nreference: a\npipelines: { a: x.yaml }\nthresholds: { a: { min_top1: 2 } }\n"),
             Catch::Contains("'thresholds.a.min_top1' must be a number from 0 to 1"));
  CHECK_THAT(error_of("prompts: p\nreference: a\npipelines: { a: x.yaml }\nthresholds: { b: { min_top1: 1 } }\n"),
             Catch::Contains("'thresholds.b' names no pipeline"));
  CHECK_THAT(error_of("prompts: p\nreference: a\npipelines: { a: { pipeline: x.yaml, set: [ nokey ] } }\n"),
             Catch::Contains("'pipelines.a.set' items are KEY=VALUE"));
  CHECK_THAT(error_of("prompts: p\nreference: a\npipelines: { a: { file: x.yaml } }\n"),
             Catch::Contains("unknown key 'pipelines.a.file'"));
  CHECK_THAT(error_of("prompts: [p\n"), Catch::Contains("not valid YAML"));
}

TEST_CASE("eval: the prompt set", "[eval]") {
  auto p = ev::parse_prompts(
      "{\"prompt\": \"Once\"}\n\n{\"id\": \"c\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}\n", "p.jsonl");
  REQUIRE(p);
  REQUIRE(p->size() == 2);
  CHECK((*p)[0].id == "line 1");
  CHECK((*p)[0].text == "Once");
  CHECK((*p)[1].chat());
  CHECK((*p)[1].messages[0].content == "hi");
  auto bad = [](const std::string& text) {
    auto r = ev::parse_prompts(text, "p.jsonl");
    REQUIRE(!r);
    return r.status().message();
  };
  CHECK_THAT(bad("{\"prompt\": \"a\"}\nnot json\n"), Catch::Contains("p.jsonl:2: each line must be one JSON object"));
  CHECK_THAT(bad("{\"prompt\": \"a\", \"messages\": []}\n"), Catch::Contains("not both"));
  CHECK_THAT(bad("{\"id\": 1}\n"), Catch::Contains("not neither"));
  CHECK_THAT(bad("{\"id\": \"x\", \"prompt\": \"a\"}\n{\"id\": \"x\", \"prompt\": \"b\"}\n"), Catch::Contains("used twice"));
  CHECK_THAT(bad("{\"prompt\": \"a\", \"temp\": 1}\n"), Catch::Contains("unknown key \"temp\""));
  CHECK_THAT(bad("\n\n"), Catch::Contains("holds no prompts"));
}

TEST_CASE("eval: agreement metrics", "[eval]") {
  // Reference: two prompts, three sampled runs each.
  const std::vector<ev::PromptOutcome> ref{outcome({1, 2, 3, 4}, {{5}, {6}, {7}}), outcome({9, 9}, {{1}, {1}, {1}})};
  // Prompt 1 differs at token 2, prompt 2 is equal; runs: {5 same, 6 differs, 7 same}, {1, 1, 2}.
  const std::vector<ev::PromptOutcome> mine{outcome({1, 2, 8}, {{5}, {0}, {7}}), outcome({9, 9}, {{1}, {1}, {2}})};
  ev::PipelineResult r;
  ev::score_outcomes(mine, ref, 3, r);
  CHECK(r.exact_match == Approx(0.5));
  CHECK(r.common_prefix == Approx((2.0 + 2.0) / 2));
  CHECK(r.seeded_agreement == Approx(4.0 / 6.0));
  // Pairs per prompt: 3. Prompt 1: {5,0,7} none equal; prompt 2: {1,1,2} one pair.
  CHECK(r.consistency == Approx((0.0 + 1.0 / 3.0) / 2));
  ev::PipelineResult one_run;
  ev::score_outcomes(mine, ref, 1, one_run);
  CHECK(one_run.consistency == -1);
}

TEST_CASE("eval: thresholds and the report", "[eval]") {
  auto spec = ev::parse_spec(kGood, "e.yaml", "/cfg");
  REQUIRE(spec);
  std::vector<ev::PipelineResult> results(2);
  results[0].name = "base";
  results[0].reference = true;
  results[0].kld.same_top = 0.5;  // the reference is never held to "all"
  results[1].name = "q8";
  results[1].kld.count = 10;
  results[1].kld.same_top = 0.8;
  results[1].kld.kld.mean = 0.02;
  results[1].exact_match = 0.75;
  const auto failures = ev::check_thresholds(*spec, results);
  // q8 has its own limits: only min_exact_match applies to it, and 0.75 keeps it.
  CHECK(failures.empty());
  spec->thresholds.erase("q8");
  const auto all = ev::check_thresholds(*spec, results);
  REQUIRE(all.size() == 2);
  CHECK(all[0] == "q8: top-1 agreement 0.8 is below min_top1 0.9");
  CHECK(all[1] == "q8: mean KL divergence 0.02 is above max_mean_kld 0.01");

  std::vector<ev::Prompt> prompts(1);
  prompts[0].id = "p1";
  results[0].prompts.push_back(outcome({1, 2}));
  results[0].prompts[0].greedy_text = "a <unk> | b\n";
  results[1].prompts.push_back(outcome({1, 3}));
  results[1].prompts[0].greedy_text = "a x";
  const auto md = ev::markdown_report(*spec, prompts, results, all, "plot.svg");
  CHECK_THAT(md, Catch::Contains("**Result: FAIL** (2 thresholds crossed)"));
  CHECK_THAT(md, Catch::Contains("| base (reference) |"));
  CHECK_THAT(md, Catch::Contains("| p1 | a &lt;unk&gt; \\| b  | token 1: a x |"));
  CHECK_THAT(md, Catch::Contains("![KL divergence per token](plot.svg)"));
  const auto svg = ev::kld_plot(results);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK_THAT(svg, Catch::Contains(">q8<"));
  const auto j = ev::report_json(*spec, results, all);
  CHECK(j["pass"] == false);
  CHECK(j["pipelines"][1]["top1"] == 0.8);
  CHECK(j["pipelines"][0]["consistency"].is_null());
}
