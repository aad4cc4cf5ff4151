// What a pipeline may cost to read: alias expansion, nesting, --set paths and list indexes,
// and sizes past 2^64 bytes are refused with a located sentence instead of exhausting
// memory or throwing. The limits are the ones docs/pipelines.md states.
#include <catch2/catch.hpp>

#include <string>

#include "pipeline/validate.hpp"
#include "support.hpp"

using namespace sy::pipeline;

namespace {

LoadResult load(const std::filesystem::path& file, const std::vector<std::string>& sets = {}) {
  // The documents name m.gguf beside them; validation checks that it exists, so an empty
  // file stands in for the model.
  if (std::filesystem::is_regular_file(file)) sy::test::write_file(file.parent_path() / "m.gguf", "");
  const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  return load_pipeline(file, sets, &dirs);
}

const Diagnostic* first_error(const std::vector<Diagnostic>& d) {
  for (const auto& x : d)
    if (!x.warning) return &x;
  return nullptr;
}

// The "billion laughs": each line lists the previous anchor nine times, so line k expands
// to 9^k scalars and the ninth to 9^9 = 387420489, far beyond the 10000-node budget.
std::string alias_bomb() {
  std::string s = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  const std::string names = "abcdefghi";
  for (size_t i = 1; i < names.size(); ++i) {
    s += names.substr(i, 1) + ": &" + names.substr(i, 1) + " [";
    for (int k = 0; k < 9; ++k) s += std::string(k ? ", " : "") + "*" + names.substr(i - 1, 1);
    s += "]\n";
  }
  return s;
}

}  // namespace

TEST_CASE("limits: a YAML alias bomb is refused at the node where the budget runs out", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "bomb.yaml", alias_bomb());
  const auto r = load(dir / "bomb.yaml");
  REQUIRE_FALSE(r.ok());
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(std::filesystem::path(e->loc.file).filename() == "bomb.yaml");
  // Counting the nodes by hand: the root, then per line a list of nine items each as large
  // as the line before: a = 1 + 9 = 10, b = 1 + 9 x 10 = 91, c = 820, d = 7381: 8303 in
  // all; e would add 66430, so the budget of 10000 runs out on line 5 ('e').
  CHECK(e->loc.line == 5);
  CHECK(e->loc.column == 1);
  CHECK(e->message.rfind("the document expands to more than 10000 nodes", 0) == 0);
  // One message for the whole document, not one per remaining branch.
  CHECK(r.diagnostics.size() == 1);
}

TEST_CASE("limits: aliases that stay small are expanded as YAML says", "[pipeline]") {
  sy::test::TempDir dir;
  // YAML 1.2 section 3.2.2.2: an alias node is the anchored node again.
  sy::test::write_file(dir / "p.yaml",
                       "model: m.gguf\nplacement:\n  overrides: &o ['a=cpu', 'b=cpu']\n"
                       "server: { host: &h 0.0.0.0, api_key: *h }\n");
  const auto r = load(dir / "p.yaml");
  REQUIRE(r.ok());
  CHECK(r.pipeline.placement.overrides.size() == 2);
  CHECK(r.pipeline.server.api_key == "0.0.0.0");
}

TEST_CASE("limits: one long text repeated by aliases is refused by its size", "[pipeline]") {
  sy::test::TempDir dir;
  // 1 MiB of text referenced 20 times is 20 MiB once expanded, past the 16 MiB budget.
  std::string doc = "model: m.gguf\nx: &big " + std::string(1 << 20, 'y') + "\nrep: [";
  for (int i = 0; i < 20; ++i) doc += std::string(i ? ", " : "") + "*big";
  doc += "]\n";
  sy::test::write_file(dir / "big.yaml", doc);
  const auto r = load(dir / "big.yaml");
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->loc.line == 3);
  CHECK(e->message.rfind("the document expands to more than 16777216 bytes of text", 0) == 0);
}

TEST_CASE("limits: a file larger than 4 MiB is not read as a pipeline", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "huge.yaml", "model: m.gguf\n# " + std::string((4 << 20) + 1, 'x') + "\n");
  const auto r = load(dir / "huge.yaml");
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message.find("more than the 4194304 this input may have") != std::string::npos);
}

TEST_CASE("limits: nesting deeper than 64 levels is an error, not a stack overflow", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "deep.yaml", "model: m.gguf\nx: " + std::string(100, '[') + std::string(100, ']') + "\n");
  const auto r = load(dir / "deep.yaml");
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->loc.line == 2);
  CHECK(e->message == "document is nested more than 64 levels deep");
}

TEST_CASE("limits: a --set list index beyond any integer names the list's size", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\nsampling: [greedy]\n");
  // 10^20 - 1 is above 2^64 - 1 = 18446744073709551615: no size_t holds it.
  auto r = load(dir / "p.yaml", {"sampling.99999999999999999999.top_k=1"});
  auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(format_diagnostic(*e) ==
        "--set sampling.99999999999999999999.top_k=1: 'sampling.99999999999999999999': the list has 1 items, so "
        "'99999999999999999999' is not a valid index");
  r = load(dir / "p.yaml", {"sampling[18446744073709551615]=greedy"});
  e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message == "'sampling.18446744073709551615': the list has 1 items, so '18446744073709551615' is not a valid index");
}

TEST_CASE("limits: a --set key path deeper than a document may be is refused", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\n");
  std::string path = "x";
  for (int i = 0; i < 64; ++i) path += ".x";  // 65 parts
  auto r = load(dir / "p.yaml", {path + "=1"});
  auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message == "the key path has 65 parts; a pipeline is at most 64 levels deep");
  r = load(dir / "p.yaml", {"...=1"});
  e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message == "an override must name a key before '=' (e.g. context.length=8192)");
}

TEST_CASE("limits: a directory given as a pipeline names the path", "[pipeline]") {
  sy::test::TempDir dir;
  const auto r = load(dir.path());
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message == "pipeline file '" + dir.path().string() + "' is a directory; give a file inside it");
}

TEST_CASE("limits: sizes stop below 2^64 bytes and percentages below 100", "[pipeline]") {
  // 2^24 TiB = 2^64 bytes: one past the largest uint64_t.
  CHECK_FALSE(parse_size("16777216TiB").has_value());
  CHECK(parse_size("16777215TiB") == (16777215ull << 40));
  CHECK_FALSE(parse_size("20000000000000000000").has_value());  // 2e19 > 2^64
  // 10^19 is exactly representable as a double and below 2^64.
  CHECK(parse_size("10000000000000000000") == 10000000000000000000ull);
  // 2^64 bytes = 2^34 GiB = 17179869184 GiB: the bound itself is refused, one GiB under is
  // exact. Both sides are spelled with the unit so the multiplication is what is tested.
  CHECK_FALSE(parse_size("17179869184GiB").has_value());
  CHECK(parse_size("17179869183GiB") == (17179869183ull << 30));
  // A long digit string is read whole (99999999 GiB fits, 10^20 - 1 GiB is about 1.1e29
  // bytes and does not); the value past 2^64 is refused, not wrapped or cast.
  CHECK(parse_size("99999999GiB") == (99999999ull << 30));
  CHECK_FALSE(parse_size("99999999999999999999GiB").has_value());
  CHECK_FALSE(parse_size("99999999999999999999").has_value());
  // An exponent is not part of a size: the text after the digits ("e30GiB") is no unit.
  CHECK_FALSE(parse_size("1e30GiB").has_value());
  CHECK_FALSE(parse_size("1" + std::string(400, '0')).has_value());  // overflows a double
  CHECK(parse_amount("99.5%")->fraction == Approx(0.995));
  CHECK_FALSE(parse_amount("100%").has_value());
  CHECK_FALSE(parse_amount("nan%").has_value());
  CHECK_FALSE(parse_amount("-1%").has_value());
  CHECK_FALSE(parse_amount("1e400%").has_value());
}

TEST_CASE("limits: numbers a pipeline gives out of range name the key and the range", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\n");
  struct Case {
    const char* set;
    const char* message;
  } cases[] = {
      {"context.length=1e300", "'context.length' must be an integer, got '1e300'"},
      {"context.length=99999999999999999999", "'context.length' must be between 16 and 2147483647, got 99999999999999999999"},
      {"context.length=2147483648", "'context.length' must be between 16 and 2147483647, got 2147483648"},
      {"context.ubatch=-1.5", "'context.ubatch' must be an integer, got '-1.5'"},
      {"context.batch=nan", "'context.batch' must be an integer, got 'nan'"},
      {"server.port=65536", "'server.port' must be between 1 and 65535, got 65536"},
      {"placement.headroom=99999999999999999999GiB",
       "'placement.headroom' must be a percentage below 100% like '10%' or a size below 16 EiB like '2GiB', got "
       "'99999999999999999999GiB'"},
      {"placement.headroom=1e30GiB",
       "'placement.headroom' must be a percentage below 100% like '10%' or a size below 16 EiB like '2GiB', got "
       "'1e30GiB'"},
  };
  for (const auto& c : cases) {
    INFO(c.set);
    const auto r = load(dir / "p.yaml", {c.set});
    const auto* e = first_error(r.diagnostics);
    REQUIRE(e != nullptr);
    CHECK(e->message == c.message);
  }
}
