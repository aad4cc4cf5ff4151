// What `validate` checks beyond types and ranges, so that a pipeline it accepts is not
// refused by `run` (issue 15): the sampling chain ends in one sampler that picks the token,
// parameter syntax, files the pipeline names, devices the overrides name, and paths that
// YAML would read as numbers. Expected positions were counted by hand (1-based).
#include <catch2/catch.hpp>

#include "pipeline/validate.hpp"
#include "support.hpp"

using namespace sy::pipeline;
namespace fs = std::filesystem;

namespace {

struct Case {
  const char* name;
  const char* yaml;
  int line;
  int column;
  std::string message;  ///< "$DIR" stands for the test's directory
};

const Diagnostic* first_error(const std::vector<Diagnostic>& diags) {
  for (const auto& d : diags)
    if (!d.warning) return &d;
  return nullptr;
}

size_t error_count(const std::vector<Diagnostic>& diags) {
  size_t n = 0;
  for (const auto& d : diags) n += d.warning ? 0 : 1;
  return n;
}

// A directory holding an empty m.gguf (the documents' model), a file called 5 and a
// directory tpl.
struct Fixture {
  sy::test::TempDir dir;
  Fixture() {
    sy::test::write_file(dir / "m.gguf", "");
    sy::test::write_file(dir / "5", "");
    fs::create_directories(dir / "tpl");
    fs::create_directories(dir / "weights");
  }
  LoadResult load(const std::string& yaml) const {
    sy::test::write_file(dir / "p.yaml", yaml);
    const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
    return load_pipeline(dir / "p.yaml", {}, &dirs);
  }
  std::string expand(std::string s) const {
    for (size_t at; (at = s.find("$DIR")) != std::string::npos;) s.replace(at, 4, dir.path().string());
    return s;
  }
};

void check_cases(const std::vector<Case>& cases) {
  const Fixture f;
  for (const auto& c : cases) {
    INFO("case: " << c.name);
    const auto r = f.load(c.yaml);
    const auto* e = first_error(r.diagnostics);
    REQUIRE(e != nullptr);
    INFO("message: " << e->message);
    CHECK(fs::path(e->loc.file).filename() == "p.yaml");
    CHECK(e->loc.line == c.line);
    CHECK(e->loc.column == c.column);
    CHECK(e->message == f.expand(c.message));
  }
}

void check_valid(const std::vector<std::pair<const char*, const char*>>& docs) {
  const Fixture f;
  for (const auto& [name, yaml] : docs) {
    INFO("case: " << name);
    const auto r = f.load(yaml);
    for (const auto& d : r.diagnostics) INFO(format_diagnostic(d));
    CHECK(error_count(r.diagnostics) == 0);
  }
}

}  // namespace

TEST_CASE("checks: the sampling chain ends in exactly one sampler that picks the token", "[pipeline][checks]") {
  check_cases({
      {"two terminal samplers", "model: m.gguf\nsampling: [ greedy, dist ]\n", 2, 21,
       "'sampling[1]': greedy (sampling[0]) already picks the token, so dist would never run; keep one of them at "
       "the end"},
      {"a sampler after the terminal one", "model: m.gguf\nsampling:\n  - greedy\n  - { top_k: 40 }\n", 4, 5,
       "'sampling[1]': greedy (sampling[0]) already picks the token, so top_k would never run; move top_k before "
       "greedy or remove it"},
      {"no terminal sampler", "model: m.gguf\nsampling: [ top_k, temperature ]\n", 2, 11,
       "'sampling' has no sampler that picks the token (temperature only reshapes the candidates), so `run` would "
       "refuse it; end it with greedy, dist or mirostat_v2"},
      {"an empty chain", "model: m.gguf\nsampling: []\n", 2, 11,
       "'sampling' is empty, so no token would ever be picked; list at least one sampler, e.g. [ greedy ]"},
  });
  check_valid({
      {"greedy alone", "model: m.gguf\nsampling: [ greedy ]\n"},
      {"shaping then mirostat_v2", "model: m.gguf\nsampling: [ { top_k: 20 }, { temperature: 0.5 }, mirostat_v2 ]\n"},
      {"shaping then dist", "model: m.gguf\nsampling: [ top_p, { dist: 7 } ]\n"},
      {"the default chain", "model: m.gguf\n"},
  });
}

TEST_CASE("checks: an unknown sampler is the only error its chain gets", "[pipeline][checks]") {
  const Fixture f;
  const auto r = f.load("model: m.gguf\nsampling: [ top_k, greddy ]\n");
  REQUIRE(error_count(r.diagnostics) == 1);
  CHECK(first_error(r.diagnostics)->message.rfind("'sampling[1]': no sampler named 'greddy'", 0) == 0);
}

TEST_CASE("checks: parameters with a declared syntax are matched item by item", "[pipeline][checks]") {
  check_cases({
      {"logit_bias entry without a colon",
       "model: m.gguf\nsampling:\n  - top_k\n  - temperature\n  - { logit_bias: { bias: [\"1:-inf\", \"15043+2\"] } }\n"
       "  - greedy\n",
       5, 38,
       "'sampling[2].logit_bias.bias[1]' must be TOKEN_ID:BIAS such as '15043:+2.5' or '2:-inf', got '15043+2'"},
      {"one entry as shorthand", "model: m.gguf\nsampling: [ { logit_bias: '2:+inf' }, greedy ]\n", 2, 27,
       "'sampling[0].logit_bias' must be TOKEN_ID:BIAS such as '15043:+2.5' or '2:-inf', got '2:+inf'"},
  });
  // The forms make_logit_bias reads (plugins/samplers/shaping_extra.cpp: std::stol for the id,
  // "-inf" or std::stof for the bias, refusing +inf and nan) are accepted; others are not.
  const Fixture f;
  for (const char* good : {"15043:+2.5", "2:-inf", "2:-INFINITY", "3:1e-3", "4:.5", "5:7.", "+6:-1", "0:0"}) {
    INFO(good);
    const auto r = f.load(std::string("model: m.gguf\nsampling: [ { logit_bias: ['") + good + "'] }, greedy ]\n");
    CHECK(error_count(r.diagnostics) == 0);
  }
  for (const char* bad : {"2:+inf", "2:inf", "2:nan", "x:1", "1:", ":1", "1:2:3", "-1:2"}) {
    INFO(bad);
    const auto r = f.load(std::string("model: m.gguf\nsampling: [ { logit_bias: ['") + bad + "'] }, greedy ]\n");
    CHECK(error_count(r.diagnostics) == 1);
  }
}

TEST_CASE("checks: files the pipeline names exist and are files", "[pipeline][checks]") {
  check_cases({
      {"missing model", "model: nothere.gguf\n", 1, 8,
       "'model': file '$DIR/nothere.gguf' does not exist; give the path of the model file or directory (a relative "
       "path is read from the directory of the file that names it)"},
      {"missing tokenizer", "model: { path: m.gguf, tokenizer: tok.json }\n", 1, 35,
       "'model.tokenizer': file '$DIR/tok.json' does not exist; give the path of a tokenizer.json (a relative path "
       "is read from the directory of the file that names it)"},
      {"template is a directory", "model:\n  path: m.gguf\n  chat_template: tpl\n", 3, 18,
       "'model.chat_template': file '$DIR/tpl' is a directory; give the path of a Jinja template file inside it"},
  });
  check_valid({
      {"a model directory", "model: weights\n"},
      {"every file present", "model: { path: m.gguf, tokenizer: m.gguf, chat_template: m.gguf }\n"},
  });
}

TEST_CASE("checks: a plugin_path entry that does not exist only warns", "[pipeline][checks]") {
  const Fixture f;
  const auto r = f.load("plugin_path: [ nothere ]\nmodel: m.gguf\n");
  CHECK(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  const auto& d = r.diagnostics[0];
  CHECK(d.warning);
  CHECK(d.loc.line == 1);
  CHECK(d.loc.column == 16);
  CHECK(d.message == f.expand("'plugin_path[0]': directory '$DIR/nothere' does not exist, so no plugins are read "
                              "from it; fix the path or remove the entry"));
}

TEST_CASE("checks: placement overrides name devices of the listed backends", "[pipeline][checks]") {
  check_cases({
      {"backend not listed", "model: m.gguf\nplacement:\n  overrides: [\"blk=cuda7\"]\n", 3, 15,
       "'placement.overrides[0]': device 'cuda7' belongs to backend 'cuda', which 'backends' does not list; add { "
       "plugin: cuda } to 'backends' or send these tensors to a listed device"},
      {"device not among the listed ones",
       "model: m.gguf\nbackends: [ { plugin: cuda, devices: [0] } ]\nplacement:\n  overrides: [\"blk=cuda7\"]\n", 4, 15,
       "'placement.overrides[0]': cuda7 is not among the devices the cuda entry lists ([0]); add 7 to its devices or "
       "use one of them"},
      {"portable name without a GPU backend", "model: m.gguf\nplacement:\n  overrides: [\"blk=gpu0\"]\n", 3, 15,
       "'placement.overrides[0]': device 'gpu0' is a GPU, but 'backends' lists none; add { plugin: vulkan } or { "
       "plugin: cuda } to 'backends' or send these tensors to cpu"},
  });
  check_valid({
      {"cpu is always there", "model: m.gguf\nplacement: { overrides: [\"blk=cpu\"] }\n"},
      {"every device of the backend", "model: m.gguf\nbackends: [ cuda, cpu ]\nplacement: { overrides: [\"blk=cuda7\"] }\n"},
      {"a portable name with any GPU backend", "model: m.gguf\nbackends: [ vulkan, cpu ]\n"
                                               "placement: { overrides: [\"blk=gpu1\"] }\n"},
      {"a listed device", "model: m.gguf\nbackends: [ { plugin: cuda, devices: [0, 2] } ]\n"
                          "placement: { overrides: [\"blk=cuda2\"] }\n"},
  });
}

TEST_CASE("checks: a path YAML reads as a number, boolean or null is refused", "[pipeline][checks]") {
  check_cases({
      {"number", "model: 5\n", 1, 8,
       "'model' must be a path or a mapping like { path: ... }; got the number 5 (quote it if a file is really "
       "called 5)"},
      {"boolean", "model: true\n", 1, 8,
       "'model' must be a path or a mapping like { path: ... }; got the boolean true (quote it if a file is really "
       "called true)"},
      {"number as model.path", "model: { path: 1.5 }\n", 1, 16,
       "'model.path' must be a path; got the number 1.5 (quote it if a file is really called 1.5)"},
      {"null", "model: null\n", 1, 8, "'model' must be a path or a mapping like { path: ... }; got nothing"},
      {"tokenizer", "model: { path: m.gguf, tokenizer: 0x1F }\n", 1, 35,
       "'model.tokenizer' must be a path; got the number 0x1F (quote it if a file is really called 0x1F)"},
      {"plugin_path item", "model: m.gguf\nplugin_path: [ .inf ]\n", 2, 16,
       "'plugin_path[0]' must be a path; got the number .inf (quote it if a file is really called .inf)"},
  });
  check_valid({{"a quoted number is a file name", "model: '5'\n"}});
}

TEST_CASE("checks: the model file check can be left out, the path's type still cannot", "[pipeline][checks]") {
  const Fixture f;
  sy::test::write_file(f.dir / "p.yaml", "model: nothere.gguf\n");
  const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
  ValidateOptions no_file;
  no_file.model_file = false;
  auto r = load_pipeline(f.dir / "p.yaml", {}, &dirs, no_file);
  CHECK(r.ok());
  CHECK(r.pipeline.model.path == f.dir / "nothere.gguf");
  sy::test::write_file(f.dir / "p.yaml", "model: 5\n");
  r = load_pipeline(f.dir / "p.yaml", {}, &dirs, no_file);
  REQUIRE(first_error(r.diagnostics) != nullptr);
  CHECK(first_error(r.diagnostics)->message.rfind("'model' must be a path or a mapping", 0) == 0);
}
