// Invalid pipelines: each must fail with the exact file, line, column and message a user
// sees. Expected positions were counted by hand from the documents below (1-based).
#include <catch2/catch.hpp>

#include "pipeline/validate.hpp"
#include "support.hpp"

namespace {

using sy::pipeline::Diagnostic;

struct Case {
  const char* name;
  const char* yaml;
  int line;
  int column;
  const char* message;
  bool prefix_only = false;  ///< the message continues with an environment-dependent list
};

// `model: m.gguf` opens most documents (line 1) so the error sits on a later line.
const Case kCases[] = {
    {"unknown top-level key", "model: m.gguf\ncontxt: {}\n", 2, 1,
     "unknown top-level key 'contxt'; did you mean 'context'?"},
    {"unknown key with suggestion", "model: m.gguf\ncontext:\n  flash_atention: true\n", 3, 3,
     "unknown key 'flash_atention' in 'context'; did you mean 'flash_attention'?"},
    {"unknown key without suggestion", "model: m.gguf\nserver:\n  colour: blue\n", 3, 3,
     "unknown key 'colour' in 'server'; valid keys: host, port, slots, batch_queue, max_queue, max_step_ms, "
     "request_timeout, api_key, api_keys, max_tokens, max_body, cors_origins, model_alias"},
    {"integer expected", "model: m.gguf\ncontext: { length: abc }\n", 2, 20,
     "'context.length' must be an integer, got 'abc'"},
    {"integer below range", "model: m.gguf\ncontext:\n  length: 8\n", 3, 11,
     "'context.length' must be between 16 and 2147483647, got 8"},
    {"enumeration with suggestion", "model: m.gguf\ncontext:\n  kv_type: q9_0\n", 3, 12,
     "'context.kv_type' must be one of f32, f16, bf16, q8_0, q4_0, fp8; got 'q9_0'; did you mean 'q8_0'?"},
    {"tri-state", "model: m.gguf\ncontext:\n  flash_attention: maybe\n", 3, 20,
     "'context.flash_attention' must be true, false or 'auto', got 'maybe'"},
    {"ubatch above batch", "model: m.gguf\ncontext:\n  batch: 256\n  ubatch: 512\n", 4, 11,
     "'context.ubatch' (512) must not exceed 'context.batch' (256)"},
    {"parallel zero", "model: m.gguf\ncontext:\n  parallel: 0\n", 3, 13,
     "'context.parallel' must be between 1 and 4096, got 0"},
    {"section of the wrong shape", "model: m.gguf\ncontext: [1, 2]\n", 2, 10,
     "'context' must be a mapping such as { length: 8192 }, got a list"},
    {"missing model", "context: { length: 512 }\n", 1, 1,
     "missing required section 'model' (e.g. model: { path: models/my-model.gguf })"},
    {"model without path", "model: { mmap: true }\n", 1, 8, "missing required key 'path' in 'model'"},
    {"empty model path", "model: { path: '' }\n", 1, 16, "'model.path' must not be empty"},
    {"boolean expected", "model: { path: m.gguf, mmap: yes }\n", 1, 30, "'model.mmap' must be true or false, got 'yes'"},
    {"unknown backend", "model: m.gguf\nbackends:\n  - { plugin: cpuu }\n", 3, 15,
     "'backends[0].plugin': no backend named 'cpuu'; did you mean 'cpu'? (installed: ", true},
    {"backend without plugin", "model: m.gguf\nbackends:\n  - { threads: 4 }\n", 3, 5,
     "missing required key 'plugin' in 'backends[0]'"},
    {"backend parameter out of range", "model: m.gguf\nbackends:\n  - { plugin: cpu, threads: 0 }\n", 3, 29,
     "'backends[0].threads' must be between 1 and 1024, got 0"},
    {"backend parameter keyword typo", "model: m.gguf\nbackends:\n  - { plugin: cpu, threads: auot }\n", 3, 29,
     "'backends[0].threads' must be an integer or 'auto', got 'auot'; did you mean 'auto'?"},
    {"backend unknown parameter", "model: m.gguf\nbackends:\n  - { plugin: cpu, thread: 4 }\n", 3, 20,
     "unknown key 'thread' in 'backends[0]'; did you mean 'threads'?"},
    {"backend listed twice", "model: m.gguf\nbackends:\n  - { plugin: cpu }\n  - { plugin: cpu }\n", 4, 15,
     "'backends[1].plugin': backend 'cpu' is listed twice (first at line 3); list its devices in one entry"},
    {"backends not a list", "model: m.gguf\nbackends: { plugin: cpu }\n", 2, 11,
     "'backends' must be a list such as [ { plugin: cpu } ], got a mapping"},
    {"negative device", "model: m.gguf\nbackends:\n  - { plugin: cpu, devices: [-1] }\n", 3, 30,
     "'backends[0].devices[0]' must be between 0 and 255, got -1"},
    {"unknown sampler", "model: m.gguf\nsampling: [ greddy ]\n", 2, 13,
     "'sampling[0]': no sampler named 'greddy'; did you mean 'greedy'? (installed: ", true},
    {"exclusive lower bound", "model: m.gguf\nsampling:\n  - { top_p: 0 }\n  - greedy\n", 3, 14,
     "'sampling[0].top_p' must be greater than 0 and at most 1, got 0"},
    {"sampler value above range", "model: m.gguf\nsampling:\n  - { top_p: 1.5 }\n  - greedy\n", 3, 14,
     "'sampling[0].top_p' must be greater than 0 and at most 1, got 1.5"},
    {"integer sampler parameter", "model: m.gguf\nsampling:\n  - { top_k: 2.5 }\n  - greedy\n", 3, 14,
     "'sampling[0].top_k' must be an integer, got '2.5'"},
    {"sampler unknown parameter", "model: m.gguf\nsampling:\n  - { top_p: { p: 0.9, mink: 2 } }\n  - greedy\n", 3, 24,
     "unknown key 'mink' in 'sampling[0].top_p'; valid keys: p, min_keep"},
    {"sampler item with two keys", "model: m.gguf\nsampling:\n  - { top_p: 0.9, top_k: 4 }\n", 3, 5,
     "'sampling[0]' must be a sampler name or a one-key mapping such as { top_p: 0.95 }, got 2 keys"},
    {"shorthand on a sampler without parameters", "model: m.gguf\nsampling:\n  - { greedy: 1 }\n", 3, 15,
     "'sampling[0].greedy': sampler 'greedy' takes no shorthand value; write 'greedy' alone or give its "
     "parameters as a mapping"},
    {"port out of range", "model: m.gguf\nserver: { port: 70000 }\n", 2, 17,
     "'server.port' must be between 1 and 65535, got 70000"},
    {"boolean given as number", "model: m.gguf\nserver: { batch_queue: 1 }\n", 2, 24,
     "'server.batch_queue' must be true or false, got '1'"},
    {"layer count keyword", "model: m.gguf\nplacement: { gpu_layers: most }\n", 2, 26,
     "'placement.gpu_layers' must be an integer, 'all' or 'auto', got 'most'"},
    {"negative layer count", "model: m.gguf\nplacement: { cpu_moe: -2 }\n", 2, 23,
     "'placement.cpu_moe' must be between 0 and 100000, got -2"},
    {"override without device", "model: m.gguf\nplacement:\n  overrides: [\"abc\"]\n", 3, 15,
     "'placement.overrides[0]' must be 'REGEX=DEVICE' (e.g. 'blk\\.1[0-9]\\.ffn_.*_exps=cpu'), got 'abc'"},
    {"override with a broken regex", "model: m.gguf\nplacement:\n  overrides: [\"blk\\\\.(=cpu\"]\n", 3, 15,
     "'placement.overrides[0]': invalid regular expression 'blk\\.(': ", true},
    {"override to an unnamed device", "model: m.gguf\nplacement:\n  overrides: [\"x=gpu\"]\n", 3, 15,
     "'placement.overrides[0]': device 'gpu' must be 'cpu' or a backend device with its index, like 'cuda0' or "
     "'vulkan1'"},
    {"headroom percentage", "model: m.gguf\nplacement: { headroom: 150% }\n", 2, 24,
     "'placement.headroom' must be a percentage below 100% like '10%' or a size below 16 EiB like '2GiB', got "
     "'150%'"},
    {"duplicate key", "model: m.gguf\ncontext: { length: 512 }\ncontext: { length: 1024 }\n", 3, 1,
     "duplicate key 'context' (first given at line 2)"},
    {"strict not boolean", "model: m.gguf\nstrict: maybe\n", 2, 9, "'strict' must be true or false, got 'maybe'"},
    {"root is a list", "- model\n- context\n", 1, 1,
     "a pipeline must be a mapping of sections (model, backends, ...), got a list"},
};

const Diagnostic* first_error(const std::vector<Diagnostic>& diags) {
  for (const auto& d : diags)
    if (!d.warning) return &d;
  return nullptr;
}

sy::pipeline::LoadResult load(const std::filesystem::path& file, const std::vector<std::string>& sets = {}) {
  const std::vector<std::filesystem::path> dirs{SY_BUILD_PLUGIN_DIR};
  // The documents name m.gguf beside them; validation checks that it exists, so an empty
  // file stands in for the model.
  if (std::filesystem::is_regular_file(file)) sy::test::write_file(file.parent_path() / "m.gguf", "");
  return sy::pipeline::load_pipeline(file, sets, &dirs);
}

}  // namespace

TEST_CASE("invalid pipelines fail with exact line, column and message", "[pipeline]") {
  STATIC_REQUIRE(sizeof(kCases) / sizeof(kCases[0]) >= 25);
  sy::test::TempDir dir;
  for (const auto& c : kCases) {
    INFO("case: " << c.name);
    const auto file = dir / "case.yaml";
    sy::test::write_file(file, c.yaml);
    const auto r = load(file);
    REQUIRE_FALSE(r.ok());
    const auto* e = first_error(r.diagnostics);
    REQUIRE(e != nullptr);
    CHECK(std::filesystem::path(e->loc.file).filename() == "case.yaml");
    CHECK(e->loc.line == c.line);
    CHECK(e->loc.column == c.column);
    if (c.prefix_only)
      CHECK(e->message.rfind(c.message, 0) == 0);
    else
      CHECK(e->message == c.message);
    INFO("message: " << e->message);
  }
}

TEST_CASE("an environment-dependent list still names the installed plugins", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\nbackends:\n  - { plugin: cpuu }\n");
  const auto r = load(dir / "p.yaml");
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message.find("(installed: cpu") != std::string::npos);
}

TEST_CASE("an empty file is reported, not crashed on", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "empty.yaml", "");
  const auto r = load(dir / "empty.yaml");
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message == "the pipeline is empty; it needs at least a 'model' section");
}

TEST_CASE("a YAML syntax error carries the parser's position", "[pipeline]") {
  sy::test::TempDir dir;
  // The flow mapping on line 2 is never closed.
  sy::test::write_file(dir / "bad.yaml", "model: m.gguf\ncontext: { length: 512\n");
  const auto r = load(dir / "bad.yaml");
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message.rfind("YAML syntax error: ", 0) == 0);
  CHECK(e->loc.line >= 2);
}

TEST_CASE("an error inside a base file points into the base file", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "base.yaml", "model: m.gguf\ncontext:\n  length: huge\n");
  sy::test::write_file(dir / "child.yaml", "extends: base.yaml\nserver: { port: 9000 }\n");
  const auto r = load(dir / "child.yaml");
  const auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(std::filesystem::path(e->loc.file).filename() == "base.yaml");
  CHECK(e->loc.line == 3);
  CHECK(e->loc.column == 11);
  CHECK(e->message == "'context.length' must be an integer, got 'huge'");
}

TEST_CASE("extends: a missing base file and a cycle are errors", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "lonely.yaml", "extends: nothere.yaml\nmodel: m.gguf\n");
  auto r = load(dir / "lonely.yaml");
  auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->loc.line == 1);
  CHECK(e->loc.column == 10);
  CHECK(e->message == "pipeline file '" + (dir.path() / "nothere.yaml").string() + "' does not exist");

  sy::test::write_file(dir / "a.yaml", "extends: b.yaml\nmodel: m.gguf\n");
  sy::test::write_file(dir / "b.yaml", "extends: a.yaml\n");
  r = load(dir / "a.yaml");
  e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(std::filesystem::path(e->loc.file).filename() == "b.yaml");
  CHECK(e->message == "'extends' forms a cycle: a.yaml -> b.yaml -> a.yaml");
}

TEST_CASE("set errors name the override", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\n");
  auto r = load(dir / "p.yaml", {"context.length=abc"});
  auto* e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(sy::pipeline::format_diagnostic(*e) == "--set context.length=abc: 'context.length' must be an integer, got 'abc'");

  r = load(dir / "p.yaml", {"context.length"});
  e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message == "an override must look like key.path=value (e.g. context.length=8192)");

  sy::test::write_file(dir / "q.yaml", "model: m.gguf\nbackends: [ { plugin: cpu } ]\n");
  r = load(dir / "q.yaml", {"backends[3].threads=2"});
  e = first_error(r.diagnostics);
  REQUIRE(e != nullptr);
  CHECK(e->message == "'backends.3': the list has 1 items, so '3' is not a valid index");
}

TEST_CASE("a backend that is part of Switchyard but not built only warns", "[pipeline]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "p.yaml", "model: m.gguf\nbackends: [ { plugin: cuda } ]\n");
  sy::test::write_file(dir / "m.gguf", "");
  // An empty plugin directory: nothing is installed, so 'cuda' is first-party but absent.
  const std::vector<std::filesystem::path> none{dir.path() / "no-plugins"};
  const auto r = sy::pipeline::load_pipeline(dir / "p.yaml", {}, &none);
  // The default sampling chain needs the samplers plugin, which is missing too: that is
  // the one error (at the document, line 1); cuda's absence is a warning.
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[1].warning);
  CHECK(r.diagnostics[1].loc.line == 2);
  CHECK(r.diagnostics[1].message.find("backend 'cuda' is not built in this installation") != std::string::npos);
  CHECK_FALSE(r.diagnostics[0].warning);
  CHECK(r.diagnostics[0].message.rfind("the default sampling chain (top_k, top_p, min_p, temperature, dist) needs "
                                       "sampler 'top_k', which is not installed", 0) == 0);
}
