// A model's recommended sampling (generation_config.json / general.sampling.*) replaces the
// built-in default chain's values that no one set, as llama.cpp applies its GGUF keys;
// whatever the pipeline, --set or a flag wrote stays.
#include <catch2/catch.hpp>

#include "engine/recommended_sampling.hpp"
#include "pipeline/load.hpp"
#include "support.hpp"

using namespace sy;

namespace {

registry::Registry& reg() {
  static registry::Registry r(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  return r;
}

std::vector<pipeline::ComponentConfig> chain(const std::string& extra, std::vector<std::string> sets = {}) {
  static const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  sy::test::TempDir dir;
  sy::test::write_file(dir / "m.gguf", "");
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\nbackends: [ cpu ]\n" + extra);
  pipeline::LoadOptions o;
  o.sets = std::move(sets);
  o.fixed_search_dirs = &dirs;
  auto r = pipeline::load_pipeline_file(dir / "p.yaml", o);
  REQUIRE(r.ok());
  return r.pipeline.sampling;
}

// Qwen3's generation_config.json: do_sample true, temperature 0.6, top_k 20, top_p 0.95.
Metadata qwen3() {
  Metadata md;
  md.set("general.sampling.temp", 0.6f);
  md.set("general.sampling.top_k", int32_t{20});
  md.set("general.sampling.top_p", 0.95f);
  md.set("general.sampling.do_sample", true);
  return md;
}

const pipeline::ComponentConfig& item(const std::vector<pipeline::ComponentConfig>& c, const std::string& name) {
  for (const auto& x : c)
    if (x.name == name) return x;
  FAIL("no " << name << " in the chain");
  return c.front();
}

}  // namespace

TEST_CASE("recommended sampling: replaces the built-in defaults of a pipeline without a chain", "[samplers]") {
  auto c = chain("");
  const auto note = engine::apply_recommended_sampling(c, qwen3(), reg());
  CHECK(item(c, "top_k").params.get_int("k") == 20);
  CHECK(item(c, "temperature").params.get_number("t") == Approx(0.6));
  CHECK(item(c, "top_p").params.get_number("p") == Approx(0.95));
  CHECK(item(c, "min_p").params.get_number("p") == Approx(0.05));  // not recommended: the default stays
  CHECK(c.back().name == "dist");
  CHECK(note.find("top_k 20") != std::string::npos);
}

TEST_CASE("recommended sampling: what --set wrote stays, the rest follows the model", "[samplers]") {
  auto c = chain("", {"sampling.temperature.t=0.3"});
  engine::apply_recommended_sampling(c, qwen3(), reg());
  CHECK(item(c, "temperature").params.get_number("t") == Approx(0.3));
  CHECK(item(c, "top_k").params.get_int("k") == 20);
}

TEST_CASE("recommended sampling: a chain the pipeline writes is left alone", "[samplers]") {
  auto c = chain("sampling: [ { top_k: 40 }, { temperature: 0.8 }, dist ]\n");
  CHECK(engine::apply_recommended_sampling(c, qwen3(), reg()).empty());
  CHECK(item(c, "top_k").params.get_int("k") == 40);
  CHECK(item(c, "temperature").params.get_number("t") == Approx(0.8));
}

TEST_CASE("recommended sampling: do_sample false is greedy decoding; a repetition penalty joins the chain", "[samplers]") {
  auto c = chain("");
  Metadata greedy;
  greedy.set("general.sampling.do_sample", false);
  greedy.set("general.sampling.temp", 0.7f);
  engine::apply_recommended_sampling(c, greedy, reg());
  REQUIRE(c.size() == 1);
  CHECK(c.front().name == "greedy");

  auto d = chain("");
  Metadata pen = qwen3();
  pen.set("general.sampling.penalty_repeat", 1.1f);
  engine::apply_recommended_sampling(d, pen, reg());
  CHECK(d.front().name == "repetition_penalty");
  CHECK(d.front().params.get_number("penalty") == Approx(1.1));
  CHECK(d.front().params.get_int("last_n") == 64);

  // A chain with a sampler the user wrote keeps its shape.
  auto e = chain("", {"sampling.top_k.k=5"});
  engine::apply_recommended_sampling(e, greedy, reg());
  CHECK(e.size() == 5);
  CHECK(item(e, "top_k").params.get_int("k") == 5);
}
