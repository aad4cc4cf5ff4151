// The storage-type registry: built-in types, plugins' types keyed by plugin, the checks a
// table must pass, and a real plugin whose type reaches both the runtime and the plugin.
#include <catch2/catch.hpp>

#include <cstring>

#include "model/source.hpp"
#include "registry/registry.hpp"
#include "support.hpp"
#include "switchyard/quant.hpp"
#include "types/type_registry.hpp"

using sy::StorageType;
using sy::StorageTypeDesc;
using sy::StorageTypeTable;
using sy::types::TypeRegistry;

namespace {

void zero_row(const void*, float* dst, int64_t n) noexcept { std::memset(dst, 0, static_cast<size_t>(n) * 4); }
void copy_rows(const void* s, void* d, int64_t n, int64_t rows) noexcept {
  std::memcpy(d, s, static_cast<size_t>(n * rows / 32 * 34));
}

StorageTypeDesc desc(const char* name, uint32_t block = 32, uint32_t bytes = 34) {
  StorageTypeDesc d;
  d.name = name;
  d.block_size = block;
  d.block_bytes = bytes;
  d.dequantize_row = zero_row;
  return d;
}

StorageTypeTable table(const std::vector<StorageTypeDesc>& v) {
  return StorageTypeTable{sizeof(StorageTypeTable), static_cast<uint32_t>(v.size()), v.data()};
}

}  // namespace

TEST_CASE("built-in types keep GGUF's ids and are listed under gguf and core", "[types]") {
  TypeRegistry r;
  const auto* q4k = r.by_id(static_cast<uint32_t>(StorageType::Q4_K));
  REQUIRE(q4k != nullptr);
  CHECK(q4k->name == "Q4_K");
  CHECK(q4k->provider == "gguf");
  CHECK(q4k->info.block_size == 256);
  CHECK(q4k->info.block_bytes == 144);
  CHECK(r.by_id(static_cast<uint32_t>(StorageType::I4_G128))->provider == "core");
  // GGUF's removed ids and unused ids are unknown: never another type's entry.
  for (uint32_t id : {4u, 5u, 31u, 36u, 40u, 999u, 1004u, 0x10000u}) CHECK(r.by_id(id) == nullptr);
  CHECK(sy::storage_type_info(4u) == nullptr);
  CHECK(sy::storage_type_name(static_cast<StorageType>(4)) == "?");
  CHECK_FALSE(sy::storage_type_from_name("Q4_L").has_value());
  CHECK(r.by_name("q8_0") == r.by_id(8));
}

TEST_CASE("a plugin's types get ids from 0x10000 and names prefixed by the plugin", "[types]") {
  TypeRegistry r;
  const size_t before = r.size();
  const std::vector a{desc("W3"), desc("W5", 64, 44)};
  REQUIRE(r.add("alpha", table(a), nullptr));
  const auto* w3 = r.by_name("alpha.W3");
  REQUIRE(w3 != nullptr);
  CHECK(static_cast<uint32_t>(w3->info.type) == sy::types::kFirstPluginId);
  CHECK(w3->name == "alpha.W3");
  CHECK(w3->info.name == "alpha.W3");
  CHECK(w3->provider == "alpha");
  CHECK(r.by_name("w5")->info.block_bytes == 44);  // the bare name, while it is unique
  CHECK(r.size() == before + 2);

  // Another plugin's W3 does not collide: both stay reachable by their full names, and the
  // bare name now names neither.
  const std::vector b{desc("W3", 32, 20)};
  REQUIRE(r.add("beta", table(b), nullptr));
  CHECK(r.by_name("beta.W3")->info.block_bytes == 20);
  CHECK(r.by_name("alpha.w3")->info.block_bytes == 34);
  std::vector<const sy::types::Entry*> both;
  CHECK(r.by_name("W3", &both) == nullptr);
  CHECK(both.size() == 2);
}

TEST_CASE("a plugin declaring the same types again is a no-op; other types under its name are refused", "[types]") {
  TypeRegistry r;
  const std::vector a{desc("W3")};
  REQUIRE(r.add("alpha", table(a), nullptr));
  const size_t n = r.size();
  const std::vector again{desc("W3")};  // another copy of the library: same declarations
  CHECK(r.add("alpha", table(again), nullptr));
  CHECK(r.size() == n);
  const std::vector other{desc("W4")};
  const auto st = r.add("alpha", table(other), nullptr);
  CHECK(st.message().find("registered other storage types already") != std::string::npos);
  CHECK(r.size() == n);
}

TEST_CASE("a malformed type table is refused whole, naming the type and the fix", "[types]") {
  TypeRegistry r;
  const size_t n = r.size();
  auto refused = [&](std::vector<StorageTypeDesc> v, const std::string& expected) {
    const auto st = r.add("bad", table(v), nullptr);
    INFO(st.message());
    CHECK_FALSE(st.is_ok());
    CHECK(st.message().find(expected) != std::string::npos);
    CHECK(r.size() == n);  // nothing of a refused table is added
  };
  refused({desc("OK"), desc("has space")}, "needs a name of 1-64 letters, digits or '_'");
  refused({desc("OK"), desc(nullptr)}, "needs a name");
  refused({desc("Q4_K")}, "takes the name of a built-in type");
  refused({desc("W"), desc("w")}, "is declared twice");
  refused({desc("W", 0, 4)}, "needs a block_size of 1-65536 elements and block_bytes of 1-1048576");
  refused({desc("W", 1u << 20, 4)}, "needs a block_size of 1-65536 elements");
  auto no_deq = desc("W");
  no_deq.dequantize_row = nullptr;
  refused({no_deq}, "has no dequantize_row");
  auto grouped = desc("W", 96, 50);
  grouped.group_size = 64;
  refused({grouped}, "not a whole number of groups of 64");
  auto no_repack = desc("W");
  no_repack.repack_to = "Q8_0";
  refused({no_repack}, "without a repack function");
  auto nowhere = desc("W");
  nowhere.repack_to = "NOT_A_TYPE";
  nowhere.repack = copy_rows;
  refused({nowhere}, "repacks into 'NOT_A_TYPE', which is not a registered type");
  auto old = desc("W");
  old.struct_size = 16;
  refused({old}, "rebuild the plugin against this SDK");
}

TEST_CASE("a repack target may be built in or declared earlier in the same table", "[types]") {
  TypeRegistry r;
  auto to_q8 = desc("A");
  to_q8.repack_to = "q8_0";
  to_q8.repack = copy_rows;
  auto to_own = desc("B");
  to_own.repack_to = "A";
  to_own.repack = copy_rows;
  const std::vector v{to_q8, to_own};
  REQUIRE(r.add("gamma", table(v), nullptr));
  CHECK(r.by_name("gamma.A")->repack_type == StorageType::Q8_0);
  CHECK(r.by_name("gamma.B")->repack_to == "gamma.A");
  CHECK(r.by_name("gamma.B")->repack_type == r.by_name("gamma.A")->info.type);
}

TEST_CASE("a plugin's type reaches the runtime and, through the host services, the plugin", "[types][registry]") {
  sy::test::TempDir dir;
  sy::test::copy_plugin(std::filesystem::path(SY_TEST_PLUGIN_DIR) / "libsytest-toy_type.so", dir.path());
  sy::registry::Registry reg(std::vector<sy::registry::SearchDir>{{dir.path(), "test"}});
  REQUIRE(reg.plugins().size() == 1);
  // Listing reads the manifest: the type is there before the library is loaded.
  REQUIRE(reg.plugins()[0].manifest.storage_types.size() == 2);
  CHECK(reg.plugins()[0].manifest.storage_types[0].name == "TOY8");
  CHECK(reg.plugins()[0].manifest.storage_types[0].repack_to == "Q8_0");
  CHECK(reg.plugins()[0].manifest.storage_types[1].name == "TOY8P");
  CHECK(reg.plugins()[0].manifest.storage_types[1].repack_to.empty());

  sy::test::write_file(dir / "weights.toy", "");  // the toy format makes its tensor up
  auto opened = sy::model::open_source(reg, dir / "weights.toy", "test_toy");
  REQUIRE(opened);
  const auto& t = opened->source->tensors()[0];
  const auto* info = sy::storage_type_info(static_cast<uint32_t>(t.type));
  REQUIRE(info != nullptr);
  CHECK(info->name == "test-toy.TOY8");
  CHECK(sy::storage_type_provider(t.type) == "test-toy");
  CHECK(static_cast<uint32_t>(t.type) >= sy::types::kFirstPluginId);

  // Its reference dequantizer, called through the SDK, against the values the plugin wrote
  // (codes j - 16 of block b, scale 0.5 * (b + 1)).
  auto bytes = opened->source->view(0);
  REQUIRE(bytes);
  std::vector<float> row(64);
  REQUIRE(sy::dequantize_row(t.type, bytes->data(), row.data(), 64));
  CHECK(row[0] == -8.0f);
  CHECK(row[31] == 7.5f);
  CHECK(row[32] == -16.0f);
  CHECK_FALSE(sy::dequantize_row(t.type, bytes->data(), row.data(), 48));  // not whole blocks

  // Its repack into Q8_0 gives the same numbers through Q8_0's own reference.
  const auto* d = sy::storage_type_desc(t.type);
  REQUIRE(d != nullptr);
  REQUIRE(d->repack != nullptr);
  std::vector<std::byte> q8(bytes->size());
  d->repack(bytes->data(), q8.data(), 64, 2);
  std::vector<float> a(128), b(128);
  REQUIRE(sy::dequantize_row(t.type, bytes->data(), a.data(), 128));
  REQUIRE(sy::dequantize_row(StorageType::Q8_0, q8.data(), b.data(), 128));
  CHECK(a == b);
}

TEST_CASE("a plugin without a manifest file registers its types and is attached when it loads", "[types][registry]") {
  sy::test::TempDir dir;
  const auto lib = std::filesystem::path(SY_TEST_PLUGIN_DIR) / "libsytest-toy_type.so";
  std::filesystem::copy_file(lib, dir / lib.filename().string());  // the library alone
  sy::registry::Registry reg(std::vector<sy::registry::SearchDir>{{dir.path(), "test"}});
  REQUIRE(reg.plugins().size() == 1);
  CHECK_FALSE(reg.plugins()[0].has_manifest_file);
  CHECK(reg.plugins()[0].manifest.storage_types.size() == 2);  // read from the opened library
  sy::test::write_file(dir / "weights.toy", "");
  auto opened = sy::model::open_source(reg, dir / "weights.toy", "test_toy");
  REQUIRE(opened);  // the plugin found its own type through the host services
  CHECK(sy::storage_type_name(opened->source->tensors()[0].type) == "test-toy.TOY8");
}

TEST_CASE("a type table whose sizes cannot be read safely is refused before any entry is read", "[types]") {
  TypeRegistry r;
  std::vector<StorageTypeDesc> v{desc("A"), desc("B")};
  StorageTypeTable t = table(v);
  t.count = 5000;
  CHECK(r.add("big", t, nullptr).message() == "plugin 'big' declares 5000 storage types, more than 4096");
  t = table(v);
  v[1].struct_size = sizeof(StorageTypeDesc) + 8;
  CHECK(r.add("mixed", t, nullptr).message().find("another struct_size than the first") != std::string::npos);
  v[1].struct_size = sizeof(StorageTypeDesc);
  v[0].struct_size = 4096;
  CHECK(r.add("huge", t, nullptr).message().find("struct_size 4096") != std::string::npos);
}
