// extends: merging and --set overrides on the located tree.
#include <catch2/catch.hpp>

#include "pipeline/validate.hpp"
#include "support.hpp"

using namespace sy::pipeline;

namespace {
LoadResult load(const std::filesystem::path& file, const std::vector<std::string>& sets = {}) {
  const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  // The documents name m.gguf beside them; validation checks that it exists, so an empty
  // file stands in for the model.
  if (std::filesystem::is_regular_file(file)) sy::test::write_file(file.parent_path() / "m.gguf", "");
  return load_pipeline(file, sets, &dirs);
}
}  // namespace

TEST_CASE("extends merges maps key by key and replaces lists", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "base/base.yaml",
                       "model: { path: weights/m.gguf, mmap: false }\n"
                       "context: { length: 8192, kv_type: q8_0 }\n"
                       "sampling: [ { top_k: 20 }, dist ]\n");
  sy::test::write_file(dir / "base/weights/m.gguf", "");
  sy::test::write_file(dir / "child.yaml",
                       "extends: base/base.yaml\n"
                       "context: { length: 16384 }\n"
                       "sampling: [ greedy ]\n");
  const auto r = load(dir / "child.yaml");
  REQUIRE(r.ok());
  const auto& p = r.pipeline;
  CHECK(p.context.length == 16384);   // child wins
  CHECK(p.context.kv_type == "q8_0"); // kept from base
  CHECK_FALSE(p.model.mmap);
  // A relative path resolves against the file that wrote it (the base), not the child.
  CHECK(p.model.path == (dir.path() / "base/weights/m.gguf").lexically_normal());
  REQUIRE(p.sampling.size() == 1);  // lists replace
  CHECK(p.sampling[0].name == "greedy");
}

TEST_CASE("set overrides scalars, list items and whole lists", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "p.yaml",
                       "model: m.gguf\n"
                       "backends: [ { plugin: cpu, threads: 2 } ]\n");
  const auto r = load(dir / "p.yaml", {"context.length=32768", "backends.0.threads=3", "sampling=[greedy]",
                                      "server.api_key=", "placement.cpu_moe=all"});
  REQUIRE(r.ok());
  CHECK(r.pipeline.context.length == 32768);
  CHECK(r.pipeline.backends.at(0).params.get_int("threads") == 3);
  REQUIRE(r.pipeline.sampling.size() == 1);
  CHECK(r.pipeline.sampling[0].name == "greedy");
  CHECK(r.pipeline.server.api_key.empty());
  CHECK(r.pipeline.placement.cpu_moe.mode == LayerCount::Mode::all);
}

TEST_CASE("defaults fill every section that is absent", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\n");
  const auto r = load(dir / "p.yaml");
  REQUIRE(r.ok());
  const auto& p = r.pipeline;
  CHECK(p.context.length == 4096);
  CHECK(p.context.kv_type == "f16");
  CHECK(p.context.batch == 2048);
  CHECK(p.context.ubatch == 512);
  CHECK(p.placement.gpu_layers.mode == LayerCount::Mode::automatic);
  CHECK(p.placement.headroom.fraction == Approx(0.10));
  CHECK(p.placement.min_headroom.bytes == (1ull << 30));
  REQUIRE(p.backends.size() == 1);
  CHECK(p.backends[0].plugin == "cpu");
  CHECK(p.backends[0].params.get_string("threads") == "auto");
  // llama.cpp's everyday chain.
  std::vector<std::string> chain;
  for (const auto& s : p.sampling) chain.push_back(s.name);
  CHECK(chain == std::vector<std::string>{"top_k", "top_p", "min_p", "temperature", "dist"});
  CHECK(p.sampling[0].params.get_int("k") == 40);
  CHECK(p.sampling[3].params.get_number("t") == Approx(0.8));
  CHECK(p.server.port == 8080);
}

TEST_CASE("sizes parse with binary and decimal units", "[pipeline]") {
  CHECK(parse_size("24GiB") == 24ull << 30);
  CHECK(parse_size("1.5GB") == 1500000000ull);
  CHECK(parse_size("512 MiB") == 512ull << 20);
  CHECK(parse_size("4096") == 4096u);
  CHECK(parse_size("2g") == 2ull << 30);
  CHECK_FALSE(parse_size("GiB").has_value());
  CHECK_FALSE(parse_size("12XB").has_value());
  CHECK_FALSE(parse_size("1e30").has_value());
}
