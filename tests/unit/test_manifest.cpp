// Manifests: written from a descriptor, read back identically, and checked on load.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "registry/manifest.hpp"
#include "support.hpp"

using namespace sy::registry;

namespace {
sy::PluginDescriptor sample() {
  sy::PluginDescriptor d;
  d.name = "sample";
  d.version = "2.0.1";
  d.summary = "a sample";
  sy::ComponentDesc c;
  c.kind = sy::ComponentKind::backend;
  c.name = "fast";
  c.version = "1.1.0";
  c.rank = 42;
  c.cpu_features = {"avx2"};
  sy::ParamSpec t{"threads", sy::ParamType::integer, "threads", std::string("auto")};
  t.min = 1;
  t.max = 64;
  t.choices = {"auto"};
  t.primary = true;
  sy::ParamSpec ratio{"ratio", sy::ParamType::number, "a ratio", 0.5};
  ratio.min = 0;
  ratio.min_exclusive = true;
  ratio.max = 1;
  sy::ParamSpec devs{"ids", sy::ParamType::integer_list, "ids", std::vector<int64_t>{0, 2}};
  sy::ParamSpec name{"label", sy::ParamType::string, "a label"};
  name.optional = true;
  c.params = {t, ratio, devs, name};
  d.components.push_back(c);
  return d;
}
}  // namespace

TEST_CASE("a manifest round-trips through its JSON file", "[registry][manifest]") {
  sy::test::TempDir dir;
  const Manifest m = manifest_from_descriptor(sample(), "libsample.so");
  REQUIRE(write_manifest(m, dir / "libsample.so.json").is_ok());
  auto back = read_manifest(dir / "libsample.so.json");
  REQUIRE(back.has_value());
  CHECK(back->library == "libsample.so");
  CHECK(back->abi_major == sy::kAbiMajor);
  CHECK(back->abi_tag == sy::kAbiTag);
  REQUIRE(back->components.size() == 1);
  const auto& c = back->components[0];
  CHECK(c.rank == 42);
  CHECK(c.cpu_features == std::vector<std::string>{"avx2"});
  REQUIRE(c.params.size() == 4);
  CHECK(std::get<std::string>(*c.params[0].def) == "auto");
  CHECK(c.params[1].min_exclusive);
  CHECK(std::get<std::vector<int64_t>>(*c.params[2].def) == std::vector<int64_t>{0, 2});
  CHECK(c.params[3].optional);
  CHECK_FALSE(manifest_difference(*back, m).has_value());
}

TEST_CASE("a manifest that disagrees with the library is detected", "[registry][manifest]") {
  const Manifest lib = manifest_from_descriptor(sample(), "libsample.so");
  Manifest disk = lib;
  disk.components[0].params[1].max = 2;
  CHECK(manifest_difference(disk, lib) == "backend 'fast' differs in 'params'");
  disk = lib;
  disk.version = "2.0.0";
  CHECK(manifest_difference(disk, lib) == "plugin version 2.0.0 vs 2.0.1");
  disk = lib;
  disk.components[0].name = "faster";
  CHECK(manifest_difference(disk, lib) == "the manifest lists backend 'faster' but the library does not provide it");
  disk = lib;
  disk.library = "renamed.so";  // a copied or renamed library is still the same plugin
  CHECK_FALSE(manifest_difference(disk, lib).has_value());
}

TEST_CASE("broken manifests are refused with the field named", "[registry][manifest]") {
  CHECK(manifest_from_json_text("{not json", "m.json").status().message() ==
        "m.json: not valid JSON; rebuild the plugin to regenerate its manifest");
  auto j = manifest_to_json(manifest_from_descriptor(sample(), "x.so"));
  j["components"][0].erase("rank");
  CHECK(manifest_from_json_text(j.dump(), "m.json").status().message() ==
        "m.json: field 'components[0].rank' is missing");
  j = manifest_to_json(manifest_from_descriptor(sample(), "x.so"));
  j["components"][0]["kind"] = "widget";
  CHECK(manifest_from_json_text(j.dump(), "m.json").status().message() ==
        "m.json: field 'components[0].kind' is 'widget'; expected format, backend or sampler");
  j = manifest_to_json(manifest_from_descriptor(sample(), "x.so"));
  j["switchyard_manifest"] = 99;
  CHECK(manifest_from_json_text(j.dump(), "m.json").status().message() ==
        "m.json: field 'switchyard_manifest' is 99, but this Switchyard reads version 1");
  j = manifest_to_json(manifest_from_descriptor(sample(), "x.so"));
  j["components"][0]["params"][1]["default"] = "half";
  CHECK(manifest_from_json_text(j.dump(), "m.json").status().message() ==
        "m.json: field 'components[0].params[1].default' does not have the declared type number");
}
