// --set into shorthand forms and by item name, extends merging a model mapping into a
// model path, and to_yaml writing a pipeline that loads back to itself.
#include <catch2/catch.hpp>

#include "pipeline/emit.hpp"
#include "pipeline/load.hpp"
#include "support.hpp"

using namespace sy::pipeline;

namespace {

LoadResult load(const std::filesystem::path& file, std::vector<std::string> sets = {}) {
  static const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  LoadOptions o;
  o.sets = std::move(sets);
  o.fixed_search_dirs = &dirs;
  return load_pipeline_file(file, o);
}

std::string messages(const LoadResult& r) {
  std::string s;
  for (const auto& d : r.diagnostics) s += format_diagnostic(d) + "\n";
  return s;
}

}  // namespace

TEST_CASE("overrides: --set expands shorthand forms before setting a key inside them", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "m.gguf", "");
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\nbackends: [ cpu ]\nsampling: [ { top_p: 0.9 }, dist ]\n");
  const auto r = load(dir / "p.yaml", {"model.mmap=false", "backends.0.threads=3", "sampling.0.top_p.min_keep=2",
                                       "sampling.1.dist.seed=4"});
  INFO(messages(r));
  REQUIRE(r.ok());
  CHECK(r.pipeline.model.path == dir / "m.gguf");  // the path written in the file is kept
  CHECK_FALSE(r.pipeline.model.mmap);
  REQUIRE(r.pipeline.backends.size() == 1);
  CHECK(r.pipeline.backends[0].params.get_int("threads") == 3);
  REQUIRE(r.pipeline.sampling.size() == 2);
  CHECK(r.pipeline.sampling[0].params.get_number("p") == Approx(0.9));  // the shorthand value survives
  CHECK(r.pipeline.sampling[0].params.get_int("min_keep") == 2);
  CHECK(r.pipeline.sampling[1].params.get_int("seed") == 4);
}

TEST_CASE("overrides: --set addresses list items by name", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "m.gguf", "");
  sy::test::write_file(dir / "p.yaml",
                       "model: m.gguf\nbackends: [ { plugin: cpu } ]\nsampling: [ { top_k: 40 }, { temperature: 0.8 }, dist ]\n");
  const auto r = load(dir / "p.yaml", {"backends.cpu.threads=2", "sampling.temperature=0.3", "sampling.top_k.k=7"});
  INFO(messages(r));
  REQUIRE(r.ok());
  CHECK(r.pipeline.backends[0].params.get_int("threads") == 2);
  CHECK(r.pipeline.sampling[0].params.get_int("k") == 7);
  CHECK(r.pipeline.sampling[1].params.get_number("t") == Approx(0.3));

  const auto bad = load(dir / "p.yaml", {"sampling.min_p.p=0.1"});
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(format_diagnostic(bad.diagnostics[0]) ==
        "--set sampling.min_p.p=0.1: 'sampling.min_p': no item of the list is named 'min_p' (it holds: top_k, "
        "temperature, dist); address items by name or by index, e.g. sampling.0");
}

TEST_CASE("overrides: --set cannot reach into a sampler shorthand without a main parameter", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "m.gguf", "");
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\nsampling: [ { greedy: 1 } ]\n");
  const auto r = load(dir / "p.yaml", {"sampling.0.greedy.x=1"});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].message ==
        "'sampling.0.greedy' is written in shorthand ({ greedy: 1 }) and sampler 'greedy' declares no main parameter; "
        "write its parameters as a mapping");
}

TEST_CASE("extends merges a child's model mapping into a base's model path", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "base/m.gguf", "");
  sy::test::write_file(dir / "base/base.yaml", "model: m.gguf\n");
  sy::test::write_file(dir / "t.jinja", "{{ 1 }}");
  sy::test::write_file(dir / "child.yaml", "extends: base/base.yaml\nmodel: { chat_template: t.jinja }\n");
  const auto r = load(dir / "child.yaml");
  INFO(messages(r));
  REQUIRE(r.ok());
  // Each path resolves against the file that wrote it.
  CHECK(r.pipeline.model.path == dir / "base/m.gguf");
  CHECK(r.pipeline.model.chat_template == dir / "t.jinja");
}

TEST_CASE("to_yaml writes a pipeline that loads back to the same pipeline", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "m.gguf", "");
  sy::test::write_file(dir / "p.yaml",
                       "model: { path: m.gguf, mmap: false }\n"
                       "backends: [ { plugin: cpu, threads: 3 } ]\n"
                       "placement: { gpu_layers: 7, cpu_moe: all, overrides: [\"exps=cpu\"], headroom: 5% }\n"
                       "context: { length: 8192, kv_type: q8_0, flash_attention: true, batch: 1024, ubatch: 256 }\n"
                       "sampling: [ { repetition_penalty: 1.1 }, { top_k: 20 }, { logit_bias: [\"2:-inf\"] }, "
                       "{ dist: 42 } ]\n"
                       "server: { port: 9000, slots: 2 }\n");
  const auto first = load(dir / "p.yaml");
  INFO(messages(first));
  REQUIRE(first.ok());
  const std::string yaml = to_yaml(first.pipeline);
  sy::test::write_file(dir / "again.yaml", yaml);
  const auto second = load(dir / "again.yaml");
  INFO(yaml << messages(second));
  REQUIRE(second.ok());
  CHECK(to_yaml(second.pipeline) == yaml);
  CHECK(second.pipeline.placement.gpu_layers.n == 7);
  CHECK(second.pipeline.placement.headroom.fraction == Approx(0.05));
  CHECK(second.pipeline.sampling[2].params.get_string_list("bias") == std::vector<std::string>{"2:-inf"});
  CHECK(second.pipeline.sampling[3].params.get_int("seed") == 42);
  CHECK(second.pipeline.server.port == 9000);
}
