// Pipeline::locations and where(): every key path validate() reads keeps the position it
// was written at, so checks made later (against the model header) can point at it.
// Expected positions were counted by hand from the document below (1-based).
#include <catch2/catch.hpp>

#include "pipeline/validate.hpp"
#include "support.hpp"

using namespace sy::pipeline;

namespace {
LoadResult load(const std::filesystem::path& file, const std::vector<std::string>& sets = {}) {
  const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  return load_pipeline(file, sets, &dirs);
}

std::string at(const Location& l) { return std::to_string(l.line) + ":" + std::to_string(l.column); }
}  // namespace

TEST_CASE("validate records where every key path was written", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "m.gguf", "");
  sy::test::write_file(dir / "p.yaml",
                       "model: m.gguf\n"
                       "context:\n"
                       "  length: 512\n"
                       "placement:\n"
                       "  overrides: [\"blk=cpu\"]\n"
                       "sampling:\n"
                       "  - { top_k: 20 }\n"
                       "  - { logit_bias: { bias: [\"1:+1\", \"2:-inf\"] } }\n"
                       "  - greedy\n");
  const auto r = load(dir / "p.yaml");
  for (const auto& d : r.diagnostics) INFO(format_diagnostic(d));
  REQUIRE(r.ok());
  const auto& p = r.pipeline;
  CHECK(at(p.where("model")) == "1:8");
  CHECK(at(p.where("model.path")) == "1:8");
  CHECK(at(p.where("context")) == "3:3");
  CHECK(at(p.where("context.length")) == "3:11");
  CHECK(at(p.where("placement.overrides[0]")) == "5:15");
  CHECK(at(p.where("sampling[0]")) == "7:5");
  CHECK(at(p.where("sampling[0].top_k")) == "7:14");
  CHECK(at(p.where("sampling[1].logit_bias.bias[1]")) == "8:36");
  CHECK(at(p.where("sampling[2]")) == "9:5");
  CHECK(p.where("context.length").file == (dir / "p.yaml").string());
}

TEST_CASE("where() falls back to the longest recorded prefix, then to the file", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "m.gguf", "");
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\nsampling:\n  - { top_k: 20 }\n  - greedy\n");
  const auto r = load(dir / "p.yaml");
  REQUIRE(r.ok());
  const auto& p = r.pipeline;
  // A key never written: its parents' positions.
  CHECK(at(p.where("sampling[0].top_k.min_keep")) == "3:14");
  CHECK(at(p.where("sampling[5].x")) == at(p.where("sampling")));
  // No section at all: the file itself, without a position.
  const Location none = p.where("server.port");
  CHECK(none.line == 0);
  CHECK(none.column == 0);
  CHECK(none.file == (dir / "p.yaml").string());
}
