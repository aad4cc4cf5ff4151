// GGUF models through Model::open and Writer: round trips, split shards, files over 4 GiB.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include "gguf_bytes.hpp"
#include "model.hpp"
#include "registry/registry.hpp"
#include "support.hpp"
#include "writer.hpp"

using namespace sy;
namespace fs = std::filesystem;

namespace {

std::vector<std::byte> pattern(size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 2654435761u + seed) >> 7);
  return v;
}

TensorDesc desc(std::string name, StorageType t, std::vector<int64_t> shape) {
  TensorDesc d{std::move(name), std::move(shape), t, 0};
  d.bytes = *tensor_bytes(t, d.shape);
  return d;
}

void write_bytes(const fs::path& p, const sy::test::GgufBytes& g) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(g.b.data()), static_cast<std::streamsize>(g.b.size()));
}

}  // namespace

TEST_CASE("writer and reader round-trip every metadata type and several storage types", "[gguf]") {
  sy::test::TempDir dir;
  gguf::Writer w;
  w.add("general.architecture", std::string("llama"));
  w.add("u8", uint8_t{200});
  w.add("i8", int8_t{-100});
  w.add("u16", uint16_t{60000});
  w.add("i16", int16_t{-30000});
  w.add("u32", uint32_t{4000000000u});
  w.add("i32", int32_t{-2000000000});
  w.add("u64", uint64_t{1} << 60);
  w.add("i64", int64_t{-(int64_t{1} << 60)});
  w.add("f32", 1.5f);
  w.add("f64", -2.25);
  w.add("bool", true);
  w.add("empty", MetaArray{MetaType::string, {}});
  w.add("tokens", MetaArray{MetaType::string, {std::string("<s>"), std::string("\xe2\x96\x81the")}});
  const auto a = pattern(desc("a", StorageType::F16, {3, 5}).bytes, 1);
  const auto b = pattern(desc("b", StorageType::Q4_K, {256, 2}).bytes, 2);
  const auto c = pattern(desc("c", StorageType::BF16, {7}).bytes, 3);
  w.add_tensor(desc("a", StorageType::F16, {3, 5}), a);
  w.add_tensor(desc("b", StorageType::Q4_K, {256, 2}), b);
  w.add_tensor(desc("c", StorageType::BF16, {7}), c);
  REQUIRE(w.write(dir / "m.gguf").is_ok());

  auto m = gguf::Model::open(dir / "m.gguf");
  REQUIRE(m.has_value());
  const auto& md = m.value()->metadata();
  CHECK(md.get_int("u8") == 200);
  CHECK(md.get_int("i8") == -100);
  CHECK(md.get_int("u16") == 60000);
  CHECK(md.get_int("i16") == -30000);
  CHECK(md.get_int("u32") == 4000000000ll);
  CHECK(md.get_int("i32") == -2000000000);
  CHECK(md.get_int("u64") == int64_t{1} << 60);
  CHECK(md.get_int("i64") == -(int64_t{1} << 60));
  CHECK(std::get<float>(*md.find("f32")) == 1.5f);
  CHECK(md.get_float("f64") == -2.25);
  CHECK(md.get_bool("bool") == true);
  CHECK(std::get<MetaArray>(*md.find("empty")).type == MetaType::string);
  CHECK(std::get<std::string>(std::get<MetaArray>(*md.find("tokens")).items[1]) == "\xe2\x96\x81the");
  REQUIRE(m.value()->tensors().size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const auto v = m.value()->view(i);
    REQUIRE(v.has_value());
    CHECK(reinterpret_cast<uintptr_t>(v.value().data()) % 32 == 0);  // aligned in the mapping
    const auto& expect = i == 0 ? a : i == 1 ? b : c;
    CHECK(std::equal(v.value().begin(), v.value().end(), expect.begin(), expect.end()));
  }
  std::vector<std::byte> part(10);
  REQUIRE(m.value()->read(1, 100, part).is_ok());
  CHECK(std::equal(part.begin(), part.end(), b.begin() + 100));
  CHECK(m.value()->read(1, b.size() - 5, part).code() == StatusCode::invalid_argument);
}

TEST_CASE("the writer refuses what GGUF cannot hold, and never replaces a file on failure", "[gguf]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "keep.gguf", "precious");
  {
    gguf::Writer w;
    w.add_tensor(desc("x", StorageType::I4_G128, {128}), pattern(68, 0));
    CHECK(w.write(dir / "keep.gguf").message() ==
          "tensor 'x' has type I4_G128, which GGUF cannot store; convert it to a GGUF type first");
  }
  {
    gguf::Writer w;
    w.add("k", uint32_t{1});
    w.add("k", uint32_t{2});
    CHECK(w.write(dir / "keep.gguf").message() == "metadata key 'k' is given twice");
  }
  {
    gguf::Writer w;
    w.add_tensor(desc("x", StorageType::F32, {4}), [](std::span<std::byte>) { return error::io_error("source gone"); });
    CHECK(w.write(dir / "keep.gguf").message() == "tensor 'x': source gone");
  }
  {
    gguf::Writer w;
    w.add("bad", MetaArray{MetaType::u32, {std::string("not a u32")}});
    CHECK(w.write(dir / "keep.gguf").message() == "metadata 'bad': an array of u32 holds a string");
  }
  std::ifstream in(dir / "keep.gguf");
  std::string s;
  in >> s;
  CHECK(s == "precious");
  CHECK_FALSE(fs::exists(dir / "keep.gguf.partial"));
}

TEST_CASE("split models: any shard opens all of them", "[gguf]") {
  sy::test::TempDir dir;
  const int n = 3;
  std::vector<std::vector<std::byte>> data;
  data.reserve(2 * n);  // the writer holds spans into these until write()
  for (int s = 0; s < n; ++s) {
    gguf::Writer w;
    if (s == 0) w.add("general.architecture", std::string("llama"));
    w.add("split.no", uint16_t(s));
    w.add("split.count", uint16_t(n));
    w.add("split.tensors.count", int32_t(2 * n));
    for (int t = 0; t < 2; ++t) {
      data.push_back(pattern(64, static_cast<unsigned>(10 * s + t)));
      w.add_tensor(desc("t" + std::to_string(s) + std::to_string(t), StorageType::F32, {16}), data.back());
    }
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.gguf", s + 1, n);
    REQUIRE(w.write(dir / name).is_ok());
  }
  for (int s = 1; s <= n; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.gguf", s, n);
    auto m = gguf::Model::open(dir / name);
    REQUIRE(m.has_value());
    CHECK(m.value()->shard_count() == 3);
    CHECK(m.value()->metadata().get_string("general.architecture") == "llama");
    REQUIRE(m.value()->tensors().size() == 6);
    for (size_t i = 0; i < 6; ++i) {
      CHECK(m.value()->tensors()[i].name == "t" + std::to_string(i / 2) + std::to_string(i % 2));
      const auto v = m.value()->view(i).value();
      CHECK(std::equal(v.begin(), v.end(), data[i].begin(), data[i].end()));
    }
  }

  // The same through the plugin, as `inspect` and the engine open models.
  {
    sy::registry::Registry reg(std::vector<sy::registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
    auto fmt = reg.create_format("gguf", {});
    REQUIRE(fmt.has_value());
    auto src = fmt.value()->open(dir / "model-00003-of-00003.gguf");
    REQUIRE(src.has_value());
    CHECK(src.value()->tensors().size() == 6);
  }

  // A short shard names itself.
  fs::resize_file(dir / "model-00002-of-00003.gguf", 100);
  auto m = gguf::Model::open(dir / "model-00001-of-00003.gguf");
  REQUIRE_FALSE(m.has_value());
  CHECK(m.status().message().rfind((dir / "model-00002-of-00003.gguf").string() + ": ", 0) == 0);

  // A missing shard is named with its expected path.
  fs::remove(dir / "model-00003-of-00003.gguf");
  m = gguf::Model::open(dir / "model-00001-of-00003.gguf");
  REQUIRE_FALSE(m.has_value());
  CHECK(m.status().message().find("model-00002-of-00003.gguf") != std::string::npos);  // still the short one
  fs::copy_file(dir / "model-00001-of-00003.gguf", dir / "renamed.gguf");
  m = gguf::Model::open(dir / "renamed.gguf");
  REQUIRE_FALSE(m.has_value());
  CHECK(m.status().message() == (dir / "renamed.gguf").string() +
                                    " is one shard of a model split into 3 files, but its name does not follow "
                                    "NAME-00001-of-00003.gguf, so the other shards cannot be found");
}

TEST_CASE("a missing shard is named with the path it was expected at", "[gguf]") {
  sy::test::TempDir dir;
  gguf::Writer w;
  w.add("split.no", uint16_t(0));
  w.add("split.count", uint16_t(2));
  REQUIRE(w.write(dir / "m-00001-of-00002.gguf").is_ok());
  auto m = gguf::Model::open(dir / "m-00001-of-00002.gguf");
  REQUIRE_FALSE(m.has_value());
  CHECK(m.status().message() == "split model m-00001-of-00002.gguf: shard 2 of 2 is missing; expected " +
                                    (dir / "m-00002-of-00002.gguf").string());
}

TEST_CASE("files over 4 GiB: offsets and sizes are 64-bit (sparse file)", "[gguf]") {
  sy::test::TempDir dir;
  const uint64_t big = (5ull << 30) + 64;  // I8 elements = bytes
  sy::test::GgufBytes g;
  g.header(3, 2, 1).kv_str("general.architecture", "test");
  g.tensor("small", {8}, 0, 0).tensor("big", {big}, 24, 32).pad();
  const uint64_t data_offset = g.size();
  write_bytes(dir / "big.gguf", g);
  // Extend sparsely to hold both tensors, then put a marker in big's last bytes.
  const uint64_t end = data_offset + 32 + big;
  fs::resize_file(dir / "big.gguf", end);
  {
    const int fd = ::open((dir / "big.gguf").c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    const char marker[8] = {'S', 'W', 'I', 'T', 'C', 'H', 'Y', 'D'};
    REQUIRE(::pwrite(fd, marker, 8, static_cast<off_t>(end - 8)) == 8);
    ::close(fd);
  }
  auto m = gguf::Model::open(dir / "big.gguf");
  REQUIRE(m.has_value());
  const auto v = m.value()->view(1);
  REQUIRE(v.has_value());
  CHECK(v.value().size() == big);
  CHECK(std::memcmp(v.value().data() + big - 8, "SWITCHYD", 8) == 0);
  std::vector<std::byte> tail(8);
  REQUIRE(m.value()->read(1, big - 8, tail).is_ok());
  CHECK(std::memcmp(tail.data(), "SWITCHYD", 8) == 0);
}
