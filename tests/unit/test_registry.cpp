// The registry against real plugin libraries built for each case (tests/plugins).
#include <catch2/catch.hpp>

#include <cstdlib>

#include "registry/registry.hpp"
#include "skip.hpp"
#include "support.hpp"
#include "switchyard/cpu.hpp"

using namespace sy::registry;
namespace fs = std::filesystem;

namespace {
fs::path test_lib(const std::string& name) { return fs::path(SY_TEST_PLUGIN_DIR) / ("libsytest-" + name + ".so"); }

Registry registry_of(const sy::test::TempDir& dir) { return Registry(std::vector<SearchDir>{{dir.path(), "test"}}); }

const Refusal* refusal_for(const Registry& r, const std::string& file_name) {
  for (const auto& x : r.refusals())
    if (x.file.filename() == file_name) return &x;
  return nullptr;
}
}  // namespace

TEST_CASE("a library that is not a plugin is refused and the rest still load", "[registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("not_a_plugin"), dir.path());
  sy::test::copy_plugin(test_lib("good"), dir.path());
  const auto reg = registry_of(dir);
  const auto* r = refusal_for(reg, "libsytest-not_a_plugin.so");
  REQUIRE(r != nullptr);
  CHECK(r->reason ==
        "is not a Switchyard plugin: it does not export the 'switchyard_plugin' descriptor (SWITCHYARD_PLUGIN(...) "
        "in the SDK)");
  CHECK(reg.find(sy::ComponentKind::sampler, "test_fixed") != nullptr);
}

TEST_CASE("a file that is not a loadable library is refused with the loader's reason", "[registry]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "libjunk.so", "this is not an ELF file");
  const auto reg = registry_of(dir);
  const auto* r = refusal_for(reg, "libjunk.so");
  REQUIRE(r != nullptr);
  CHECK(r->reason.rfind("could not be loaded: ", 0) == 0);
  CHECK(reg.plugins().empty());
}

// tests/plugins/abi_major.cpp: the next major's descriptor, whose words after the version a
// runtime cannot read without crashing; its manifest as the next SDK's tool would write it.
TEST_CASE("a plugin of another ABI major version is refused, naming both versions", "[registry]") {
  sy::test::TempDir dir;
  fs::copy_file(test_lib("abi_major"), dir / "libsytest-abi_major.so");
  sy::test::write_file(dir / "libsytest-abi_major.so.json",
                       "{\"switchyard_manifest\": 1, \"library\": \"libsytest-abi_major.so\", \"abi\": {\"major\": " +
                           std::to_string(sy::kAbiMajor + 1) +
                           ", \"minor\": 0, \"tag\": \"c\"}, \"plugin\": {\"name\": \"test-abi\", \"version\": "
                           "\"1.0.0\", \"summary\": \"\"}, \"components\": []}");
  const auto reg = registry_of(dir);
  const auto* r = refusal_for(reg, "libsytest-abi_major.so");
  REQUIRE(r != nullptr);
  const std::string ours = std::to_string(sy::kAbiMajor) + "." + std::to_string(sy::kAbiMinor);
  const std::string theirs = std::to_string(sy::kAbiMajor + 1) + ".0";
  CHECK(r->reason == "plugin 'test-abi' built for plugin ABI " + theirs + ", but this Switchyard provides ABI " + ours +
                         "; rebuild the plugin against the installed SDK");
  CHECK(reg.plugins().empty());
}

TEST_CASE("without a manifest, only the descriptor's ABI version is read before the refusal", "[registry]") {
  sy::test::TempDir dir;
  fs::copy_file(test_lib("abi_major"), dir / "libsytest-abi_major.so");  // library only
  const auto reg = registry_of(dir);
  const auto* r = refusal_for(reg, "libsytest-abi_major.so");
  REQUIRE(r != nullptr);
  const std::string ours = std::to_string(sy::kAbiMajor) + "." + std::to_string(sy::kAbiMinor);
  CHECK(r->reason == "built for plugin ABI " + std::to_string(sy::kAbiMajor + 1) + ".0, but this Switchyard provides ABI " +
                         ours + "; rebuild the plugin against the installed SDK");
  CHECK(reg.plugins().empty());
}

TEST_CASE("a second component with the same kind and name is refused, the plugin's others stay", "[registry]") {
  // Within a directory, libraries are taken in file-name order: libsytest-duplicate.so
  // comes first, so the clash is reported against libsytest-good.so.
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("good"), dir.path());
  sy::test::copy_plugin(test_lib("duplicate"), dir.path());
  const auto reg = registry_of(dir);
  const auto* r = refusal_for(reg, "libsytest-good.so");
  REQUIRE(r != nullptr);
  CHECK(r->reason == "sampler 'test_fixed' refused: already provided by " + (dir / "libsytest-duplicate.so").string());
  const auto* fixed = reg.find(sy::ComponentKind::sampler, "test_fixed");
  REQUIRE(fixed != nullptr);
  CHECK(reg.plugin(*fixed).manifest.name == "test-dup");
  CHECK(reg.find(sy::ComponentKind::sampler, "test_unique") != nullptr);
  CHECK(reg.find(sy::ComponentKind::sampler, "test_other") != nullptr);
}

TEST_CASE("earlier search directories win a clash", "[registry]") {
  sy::test::TempDir first, second;
  sy::test::copy_plugin(test_lib("good"), first.path());
  sy::test::copy_plugin(test_lib("duplicate"), second.path());
  const Registry reg(std::vector<SearchDir>{{first.path(), "first"}, {second.path(), "second"}});
  const auto* fixed = reg.find(sy::ComponentKind::sampler, "test_fixed");
  REQUIRE(fixed != nullptr);
  CHECK(reg.plugin(*fixed).manifest.name == "test-good");
  CHECK(reg.plugin(*fixed).origin == "first");
  REQUIRE(refusal_for(reg, "libsytest-duplicate.so") != nullptr);
}

TEST_CASE("listing reads manifests only, a library loads when a component is first created", "[registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("good"), dir.path());
  Registry reg = registry_of(dir);
  REQUIRE(reg.plugins().size() == 1);
  CHECK(reg.plugins()[0].has_manifest_file);
  CHECK_FALSE(reg.is_loaded(0));
  sy::ParamMap p;
  p.set("id", int64_t{11});
  auto s = reg.create_sampler("test_fixed", p);
  REQUIRE(s.has_value());
  CHECK(reg.is_loaded(0));
  sy::CandidateList c;
  REQUIRE(s.value()->apply(c, {}).is_ok());
  CHECK(c.selected == 11);
  CHECK(reg.create_sampler("nope", p).status().message() == "no sampler 'nope' is installed");
}

TEST_CASE("a manifest that disagrees with the loaded library is an error at load", "[registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("good"), dir.path());
  const fs::path manifest = dir / "libsytest-good.so.json";
  auto m = read_manifest(manifest);
  REQUIRE(m.has_value());
  m->components[0].params[0].max = 5;  // the library says 1000
  REQUIRE(write_manifest(*m, manifest).is_ok());
  Registry reg = registry_of(dir);
  const auto st = reg.load(0);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message() == (dir / "libsytest-good.so").string() + ": its manifest " + manifest.string() +
                            " disagrees with the library's descriptor (sampler 'test_fixed' differs in 'params'); "
                            "rebuild the plugin so the build regenerates the manifest");
  CHECK_FALSE(reg.create_sampler("test_fixed", {}).has_value());
}

TEST_CASE("an unreadable manifest refuses the plugin", "[registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("good"), dir.path());
  sy::test::write_file(dir / "libsytest-good.so.json", "{ truncated");
  const auto reg = registry_of(dir);
  const auto* r = refusal_for(reg, "libsytest-good.so");
  REQUIRE(r != nullptr);
  CHECK(r->reason == "its manifest is unusable: " + (dir / "libsytest-good.so.json").string() +
                         ": not valid JSON; rebuild the plugin to regenerate its manifest");
}

TEST_CASE("an exception in a factory becomes an error, not a crash", "[registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("throws"), dir.path());
  Registry reg = registry_of(dir);
  auto s = reg.create_sampler("test_throws", {});
  REQUIRE_FALSE(s.has_value());
  CHECK(s.status().code() == sy::StatusCode::internal);
  CHECK(s.status().message() == "component factory threw: device exploded");
}

TEST_CASE("rank and CPU features decide automatic choices, with the reason", "[registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("cpu_feature"), dir.path());
  ::setenv("SWITCHYARD_CPU_ISA", "avx2", 1);
  Registry limited = registry_of(dir);
  ::unsetenv("SWITCHYARD_CPU_ISA");
  const auto* fast = limited.find(sy::ComponentKind::sampler, "test_avx512");
  REQUIRE(fast != nullptr);
  CHECK_FALSE(fast->available);
  const auto choice = limited.choose(sy::ComponentKind::sampler);
  REQUIRE(choice.component != nullptr);
  CHECK(limited.manifest(*choice.component).name == "test_portable");
  CHECK(choice.explanation ==
        "chose sampler 'test_portable' (rank 10); skipped 'test_avx512': needs CPU feature avx512f, which this CPU "
        "(or SWITCHYARD_CPU_ISA) does not allow");
  CHECK(limited.create_sampler("test_avx512", {}).status().code() == sy::StatusCode::unavailable);
}

TEST_CASE("the variant for a CPU feature the CPU has outranks the portable one", "[registry]") {
  if (!sy::cpu_has("avx512f")) SY_SKIP_HARDWARE("needs AVX-512 F, which this CPU (or SWITCHYARD_CPU_ISA) does not allow");
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("cpu_feature"), dir.path());
  Registry full = registry_of(dir);
  const auto* fast = full.find(sy::ComponentKind::sampler, "test_avx512");
  REQUIRE(fast != nullptr);
  REQUIRE(fast->available);
  const auto c2 = full.choose(sy::ComponentKind::sampler);
  CHECK(full.manifest(*c2.component).name == "test_avx512");
  CHECK(c2.explanation == "chose sampler 'test_avx512' (rank 90); 'test_portable' ranks lower (10)");
}

TEST_CASE("created objects keep their library loaded after the registry is gone", "[registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("good"), dir.path());
  Owned<sy::Sampler> s{nullptr, {}};
  {
    Registry reg = registry_of(dir);
    auto r = reg.create_sampler("test_other", {});
    REQUIRE(r.has_value());
    s = std::move(r.value());
  }
  sy::CandidateList c;
  REQUIRE(s->apply(c, {}).is_ok());  // the code is still mapped
  CHECK(c.selected == 7);
}

TEST_CASE("the best reader for a file: probe score first, then rank, with the reason", "[registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(test_lib("formats"), dir.path());
  Registry reg = registry_of(dir);
  auto c = reg.choose_format("/models/x.tmagic");
  REQUIRE(c.has_value());
  CHECK(reg.manifest(*c->component).name == "test_magic");
  CHECK(c->explanation == "chose format 'test_magic' for x.tmagic (probe scores: test_magic 100, test_guess 50)");
  c = reg.choose_format("/models/x.tother");
  REQUIRE(c.has_value());
  CHECK(reg.manifest(*c->component).name == "test_guess");
  c = reg.choose_format("/models/x.ttie");
  REQUIRE(c.has_value());
  CHECK(c->explanation ==
        "chose format 'test_magic' for x.ttie (probe scores: test_magic 60, test_guess 60; tie broken by rank)");
  const auto none = reg.choose_format("/models/x.bin");
  REQUIRE_FALSE(none.has_value());
  CHECK(none.status().message() ==
        "no installed weight format can read /models/x.bin (probe scores: test_magic 0, test_guess 0)");
}
