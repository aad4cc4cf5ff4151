// ABI 2.0's declarations in manifests: component traits and a parameter's syntax pattern,
// its hint and whether it names token ids, written, read back and checked field by field.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "registry/manifest.hpp"
#include "support.hpp"

using namespace sy::registry;

namespace {
sy::PluginDescriptor with_traits() {
  sy::PluginDescriptor d;
  d.name = "traits";
  d.version = "1.0.0";
  sy::ComponentDesc c;
  c.kind = sy::ComponentKind::sampler;
  c.name = "pick";
  c.version = "1.0.0";
  c.traits = {"terminal", "experimental"};
  sy::ParamSpec ids{"ids", sy::ParamType::string_list, "entries", std::vector<std::string>{}};
  ids.pattern = "[0-9]+:[a-z]+";
  ids.pattern_hint = "ID:WORD such as '3:cat'";
  ids.token_ids = true;
  c.params = {ids};
  d.components.push_back(c);
  return d;
}

std::string refusal(const nlohmann::json& j) { return manifest_from_json_text(j.dump(), "m.json").status().message(); }
}  // namespace

TEST_CASE("traits, pattern, pattern_hint and token_ids round-trip through a manifest", "[registry][manifest]") {
  sy::test::TempDir dir;
  const Manifest m = manifest_from_descriptor(with_traits(), "libtraits.so");
  REQUIRE(write_manifest(m, dir / "libtraits.so.json").is_ok());
  auto back = read_manifest(dir / "libtraits.so.json");
  REQUIRE(back.has_value());
  REQUIRE(back->components.size() == 1);
  const auto& c = back->components[0];
  CHECK(c.traits == std::vector<std::string>{"terminal", "experimental"});
  CHECK(c.has_trait("terminal"));
  CHECK_FALSE(c.has_trait("termina"));
  REQUIRE(c.params.size() == 1);
  CHECK(c.params[0].pattern == "[0-9]+:[a-z]+");
  CHECK(c.params[0].pattern_hint == "ID:WORD such as '3:cat'");
  CHECK(c.params[0].token_ids);
  CHECK_FALSE(manifest_difference(*back, m).has_value());
  Manifest changed = m;
  changed.components[0].traits = {};
  CHECK(manifest_difference(changed, m) == "sampler 'pick' differs in 'traits'");
}

TEST_CASE("absent trait and pattern fields read as empty", "[registry][manifest]") {
  auto j = manifest_to_json(manifest_from_descriptor(with_traits(), "x.so"));
  j["components"][0].erase("traits");
  for (const char* k : {"pattern", "pattern_hint", "token_ids"}) j["components"][0]["params"][0].erase(k);
  auto m = manifest_from_json_text(j.dump(), "m.json");
  REQUIRE(m.has_value());
  CHECK(m->components[0].traits.empty());
  CHECK(m->components[0].params[0].pattern.empty());
  CHECK(m->components[0].params[0].pattern_hint.empty());
  CHECK_FALSE(m->components[0].params[0].token_ids);
}

TEST_CASE("trait and pattern fields of the wrong type are refused with the field named", "[registry][manifest]") {
  const auto base = manifest_to_json(manifest_from_descriptor(with_traits(), "x.so"));
  auto j = base;
  j["components"][0]["traits"] = "terminal";
  CHECK(refusal(j) == "m.json: field 'components[0].traits' must be an array of strings");
  j = base;
  j["components"][0]["traits"] = {"terminal", 3};
  CHECK(refusal(j) == "m.json: field 'components[0].traits' must be an array of strings");
  j = base;
  j["components"][0]["params"][0]["pattern"] = 5;
  CHECK(refusal(j) == "m.json: field 'components[0].params[0].pattern' must be a string");
  j = base;
  j["components"][0]["params"][0]["pattern_hint"] = false;
  CHECK(refusal(j) == "m.json: field 'components[0].params[0].pattern_hint' must be a string");
  j = base;
  j["components"][0]["params"][0]["token_ids"] = "yes";
  CHECK(refusal(j) == "m.json: field 'components[0].params[0].token_ids' must be true or false");
  j = base;
  j["components"][0]["params"][0]["pattern"] = "([0-9]+";
  const std::string why = refusal(j);
  CHECK(why.rfind("m.json: field 'components[0].params[0].pattern' is not a valid ECMAScript regular expression (", 0) ==
        0);
  CHECK(why.find("); fix the plugin's ParamSpec::pattern and rebuild it") != std::string::npos);
}

TEST_CASE("the samplers that pick the token declare it; logit_bias declares its syntax", "[registry][manifest]") {
  auto m = read_manifest(std::filesystem::path(SY_BUILD_PLUGIN_DIR) / "libswitchyard-samplers.so.json");
  REQUIRE(m.has_value());
  std::vector<std::string> terminal;
  const ComponentManifest* bias = nullptr;
  for (const auto& c : m->components) {
    if (c.has_trait(sy::kTraitTerminal)) terminal.push_back(c.name);
    if (c.name == "logit_bias") bias = &c;
  }
  // The three whose apply() sets CandidateList::selected (plugins/samplers/terminal.cpp).
  CHECK(terminal == std::vector<std::string>{"greedy", "dist", "mirostat_v2"});
  REQUIRE(bias != nullptr);
  REQUIRE(bias->param("bias") != nullptr);
  CHECK(bias->param("bias")->token_ids);
  CHECK(bias->param("bias")->pattern_hint == "TOKEN_ID:BIAS such as '15043:+2.5' or '2:-inf'");
}
