// Crafted corrupt GGUF files: each gets its own clear message, never a crash and never an
// allocation larger than the file. Built byte by byte with tests/gguf_bytes.hpp.
#include <catch2/catch.hpp>

#include <functional>
#include <optional>

#include "gguf_bytes.hpp"
#include "parse.hpp"
#include "split.hpp"

using sy::test::GgufBytes;

namespace {

struct Case {
  const char* name;
  std::function<GgufBytes()> build;
  std::function<std::string(const GgufBytes&)> message;  // computed from the bytes' layout where offsets matter
};

std::string msg(const std::string& m) { return "f.gguf: " + m; }

// A valid one-tensor file to corrupt: F32 [8] "w" at offset 0.
GgufBytes valid() {
  GgufBytes g;
  g.header(3, 1, 1).kv_str("general.architecture", "llama").tensor("w", {8}, 0, 0).pad().data(32);
  return g;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"empty file", [] { return GgufBytes{}; },
       [](auto&) { return msg("not a GGUF file (it starts with '', not 'GGUF')"); }},
      {"wrong magic", [] { GgufBytes g; g.b = {'G', 'G', 'M', 'L', 1, 0, 0, 0}; return g; },
       [](auto&) { return msg("not a GGUF file (it starts with 'GGML', not 'GGUF')"); }},
      {"version 1", [] { GgufBytes g; g.header(1, 0, 0); return g; },
       [](auto&) { return msg("GGUF version 1 is not supported (only 2 and 3); re-convert the model with a current llama.cpp"); }},
      {"version 4", [] { GgufBytes g; g.header(4, 0, 0); return g; },
       [](auto&) { return msg("GGUF version 4 is not supported (only 2 and 3)"); }},
      {"header cut after the version", [] { GgufBytes g; g.b = {'G', 'G', 'U', 'F', 3, 0, 0, 0}; return g; },
       [](auto&) { return msg("the file is truncated: reading the tensor count at offset 8 needs 8 bytes, but only 0 remain"); }},
      {"absurd metadata count", [] { GgufBytes g; g.header(3, 0, 1000000000000ull); return g; },
       [](auto& g) { return msg("the header claims 1000000000000 metadata entries, more than a file of " + std::to_string(g.size()) + " bytes can hold"); }},
      {"absurd tensor count", [] { GgufBytes g; g.header(3, 1ull << 40, 0); return g; },
       [](auto& g) { return msg("the header claims 1099511627776 tensors, more than a file of " + std::to_string(g.size()) + " bytes can hold"); }},
      {"absurd key length", [] { GgufBytes g; g.header(3, 0, 1).u64(1ull << 40).u32(4).u32(0); return g; },
       [](auto&) { return msg("a metadata key at offset 24 claims 1099511627776 bytes, more than the 8 left in the file"); }},
      {"duplicate metadata key", [] { GgufBytes g; g.header(3, 0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2); return g; },
       [](auto&) { return msg("duplicate metadata key 'a.b'"); }},
      {"unknown value type", [] { GgufBytes g; g.header(3, 0, 1).str("k").u32(13).u32(0); return g; },
       [](auto&) { return msg("metadata 'k' has unknown value type 13"); }},
      {"absurd array length", [] { GgufBytes g; g.header(3, 0, 1).str("k").u32(GgufBytes::ARRAY).u32(GgufBytes::U32).u64(1ull << 50).u32(0); return g; },
       [](auto&) { return msg("metadata 'k' claims an array of 1125899906842624 elements, more than the rest of the file can hold"); }},
      {"array of an unknown type", [] { GgufBytes g; g.header(3, 0, 1).str("k").u32(GgufBytes::ARRAY).u32(77).u64(1); return g; },
       [](auto&) { return msg("metadata 'k' is an array of unknown value type 77"); }},
      {"arrays nested too deep", [] {
         GgufBytes g;
         g.header(3, 0, 1).str("k").u32(GgufBytes::ARRAY);
         for (int i = 0; i < 9; ++i) g.u32(GgufBytes::ARRAY).u64(1);
         g.u32(GgufBytes::U8).u64(0).data(64, 0);
         return g; },
       [](auto&) { return msg("metadata 'k' nests arrays more than 8 deep"); }},
      {"bool that is neither 0 nor 1", [] { GgufBytes g; g.header(3, 0, 1).str("k").u32(GgufBytes::BOOL).put<uint8_t>(2); return g; },
       [](auto&) { return msg("metadata 'k' has a bool value of 2 (must be 0 or 1)"); }},
      {"string value cut short", [] { GgufBytes g; g.header(3, 0, 1).str("k").u32(GgufBytes::STRING).u64(100); g.b.insert(g.b.end(), {'a', 'b'}); return g; },
       [](auto&) { return msg("a string value at offset 37 claims 100 bytes, more than the 2 left in the file"); }},
      {"alignment not a power of two", [] { GgufBytes g; g.header(3, 0, 1).kv_u32("general.alignment", 48); return g; },
       [](auto&) { return msg("'general.alignment' must be a u32 power of two, got 48"); }},
      {"alignment of the wrong type", [] { GgufBytes g; g.header(3, 0, 1).kv_str("general.alignment", "32"); return g; },
       [](auto&) { return msg("'general.alignment' must be a u32 power of two, got a string"); }},
      {"five dimensions", [] { GgufBytes g; g.header(3, 1, 0).tensor("w", {1, 1, 1, 1, 1}, 0, 0).pad().data(32); return g; },
       [](auto&) { return msg("tensor 'w' has 5 dimensions; GGUF allows at most 4"); }},
      {"unknown storage type", [] { GgufBytes g; g.header(3, 1, 0).tensor("w", {8}, 99, 0).pad().data(32); return g; },
       [](auto&) { return msg("tensor 'w' has unknown storage type 99 (this Switchyard reads GGUF types up to MXFP4; a newer llama.cpp may have written it)"); }},
      {"removed storage type Q4_2", [] { GgufBytes g; g.header(3, 1, 0).tensor("w", {32}, 4, 0).pad().data(32); return g; },
       [](auto&) { return msg("tensor 'w' has unknown storage type 4 (this Switchyard reads GGUF types up to MXFP4; a newer llama.cpp may have written it)"); }},
      {"row not a whole number of blocks", [] { GgufBytes g; g.header(3, 1, 0).tensor("w", {33, 2}, 8, 0).pad().data(96); return g; },
       [](auto&) { return msg("tensor 'w' has rows of 33 elements, not a multiple of Q8_0's block size 32"); }},
      {"size overflowing 64 bits", [] { GgufBytes g; g.header(3, 1, 0).tensor("w", {1ull << 32, 1ull << 32, 1ull << 32}, 0, 0).pad(); return g; },
       [](auto&) { return msg("tensor 'w' is too large: its size overflows 64 bits"); }},
      // Size 0 (a zero dimension), but the stride of the last dimension is 4 * 2^30 * 2^31 =
      // 2^63 bytes: past a signed 64-bit stride, within the unsigned size arithmetic.
      {"strides overflowing 64 bits", [] { GgufBytes g; g.header(3, 1, 0).tensor("w", {1ull << 30, 1ull << 31, 0}, 0, 0).pad(); return g; },
       [](auto&) { return msg("tensor 'w' is too large: the strides of its dimensions overflow 64 bits"); }},
      {"impossible dimension", [] { GgufBytes g; g.header(3, 1, 0).tensor("w", {~0ull}, 0, 0).pad(); return g; },
       [](auto&) { return msg("tensor 'w' has an impossible dimension 18446744073709551615"); }},
      {"misaligned data offset", [] { GgufBytes g; g.header(3, 1, 0).tensor("w", {8}, 0, 4).pad().data(64); return g; },
       [](auto&) { return msg("tensor 'w' has data offset 4, not a multiple of the alignment 32"); }},
      {"data cut short", [] { auto g = valid(); g.b.erase(g.b.end() - 1, g.b.end()); return g; },
       [](auto&) { return msg("the file is truncated or corrupt: tensor 'w' (32 bytes at data offset 0) extends past the end of the data section (31 bytes)"); }},
      {"data section missing", [] { auto g = valid(); g.b.erase(g.b.end() - 40, g.b.end()); return g; },
       [](auto& g) { return msg("the file is truncated: it ends at " + std::to_string(g.size()) + " bytes, before its data section starts at " + std::to_string(g.size() + 8)); }},
      {"duplicate tensor name", [] { GgufBytes g; g.header(3, 2, 0).tensor("w", {8}, 0, 0).tensor("w", {8}, 0, 32).pad().data(64); return g; },
       [](auto&) { return msg("duplicate tensor name 'w'"); }},
      {"empty tensor name", [] { GgufBytes g; g.header(3, 1, 0).tensor("", {8}, 0, 0).pad().data(32); return g; },
       [](auto&) { return msg("tensor 0 has an empty name"); }},
  };
  return c;
}

}  // namespace

TEST_CASE("crafted corrupt GGUF files each get their own clear message", "[gguf]") {
  REQUIRE(cases().size() >= 20);
  for (const auto& c : cases()) {
    INFO("case: " << c.name);
    const auto g = c.build();
    const auto r = sy::gguf::parse(std::as_bytes(std::span(g.b)), "f.gguf");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.status().code() == sy::StatusCode::corrupt);
    CHECK(r.status().message() == c.message(g));
  }
}

TEST_CASE("overlapping tensor data is refused", "[gguf]") {
  // "a" is 64 bytes (F32 [16]) at offset 0, "b" starts at 32: they share 32 bytes.
  GgufBytes g;
  g.header(3, 2, 0).tensor("a", {16}, 0, 0).tensor("b", {16}, 0, 32).pad().data(128);
  const auto r = sy::gguf::parse(std::as_bytes(std::span(g.b)), "f.gguf");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.status().message() == "f.gguf: tensors 'a' and 'b' overlap in the data section");
}

TEST_CASE("a valid crafted file parses with the values it was written with", "[gguf]") {
  GgufBytes g;
  g.header(2, 1, 4)
      .kv_str("general.architecture", "llama")
      .kv_u32("general.alignment", 64)
      .str("nested").u32(GgufBytes::ARRAY).u32(GgufBytes::ARRAY).u64(2)
      .u32(GgufBytes::I32).u64(1).put<int32_t>(-5)
      .u32(GgufBytes::STRING).u64(2).str("x").str("")
      .str("f").u32(GgufBytes::F64).put<double>(0.25)
      .tensor("q", {64, 3}, 8, 0)
      .pad(64)
      .data(2 * 34 * 3);
  const auto r = sy::gguf::parse(std::as_bytes(std::span(g.b)), "f.gguf");
  REQUIRE(r.has_value());
  const auto& f = r.value();
  CHECK(f.version == 2);
  CHECK(f.alignment == 64);
  CHECK(f.data_offset % 64 == 0);
  REQUIRE(f.kv.size() == 4);
  const auto& nested = std::get<sy::MetaArray>(f.kv[2].second);
  CHECK(nested.type == sy::MetaType::array);
  REQUIRE(nested.items.size() == 2);
  CHECK(std::get<int32_t>(std::get<sy::MetaArray>(nested.items[0]).items[0]) == -5);
  CHECK(std::get<std::string>(std::get<sy::MetaArray>(nested.items[1]).items[1]).empty());
  CHECK(std::get<double>(f.kv[3].second) == 0.25);
  REQUIRE(f.tensors.size() == 1);
  CHECK(f.tensors[0].desc.type == sy::StorageType::Q8_0);
  CHECK(f.tensors[0].desc.bytes == 204);
}

TEST_CASE("every prefix of a valid file is rejected cleanly", "[gguf]") {
  const auto g = valid();
  for (size_t n = 0; n < g.size(); ++n) {
    const auto r = sy::gguf::parse(std::as_bytes(std::span(g.b.data(), n)), "f.gguf");
    INFO(n);
    CHECK_FALSE(r.has_value());
  }
  CHECK(sy::gguf::parse(std::as_bytes(std::span(g.b)), "f.gguf").has_value());
}

namespace {

// A parsed shard with these split keys and tensor names (each an F32 [8]).
sy::gguf::File shard_file(std::optional<uint32_t> no, std::optional<uint32_t> count, std::optional<uint32_t> total,
                          std::vector<std::string> tensors) {
  GgufBytes g;
  const uint64_t n_kv = (no ? 1 : 0) + (count ? 1 : 0) + (total ? 1 : 0);
  g.header(3, tensors.size(), n_kv);
  if (no) g.kv_u32("split.no", *no);
  if (count) g.kv_u32("split.count", *count);
  if (total) g.kv_u32("split.tensors.count", *total);
  for (size_t i = 0; i < tensors.size(); ++i) g.tensor(tensors[i], {8}, 0, 32 * i);
  g.pad().data(32 * tensors.size());
  auto r = sy::gguf::parse(std::as_bytes(std::span(g.b)), "shard");
  REQUIRE(r.has_value());
  return std::move(r.value());
}

}  // namespace

TEST_CASE("split sets: shards must agree on their position, count and tensors", "[gguf]") {
  using sy::gguf::ShardRef;
  const auto a = shard_file(0, 2, 3, {"x", "y"});
  const auto b = shard_file(1, 2, std::nullopt, {"z"});
  CHECK(sy::gguf::check_split_set(std::vector<ShardRef>{{&a, "m-1"}, {&b, "m-2"}}).is_ok());

  const auto b_wrong_no = shard_file(0, 2, std::nullopt, {"z"});
  CHECK(sy::gguf::check_split_set(std::vector<ShardRef>{{&a, "m-1"}, {&b_wrong_no, "m-2"}}).message() ==
        "m-2: 'split.no' is 0, expected 1 for shard 2 of 2");
  const auto b_wrong_count = shard_file(1, 3, std::nullopt, {"z"});
  CHECK(sy::gguf::check_split_set(std::vector<ShardRef>{{&a, "m-1"}, {&b_wrong_count, "m-2"}}).message() ==
        "m-2: 'split.count' is 3, but the model has 2 shards");
  const auto b_repeats = shard_file(1, 2, std::nullopt, {"y"});
  CHECK(sy::gguf::check_split_set(std::vector<ShardRef>{{&a, "m-1"}, {&b_repeats, "m-2"}}).message() ==
        "m-2: tensor 'y' also appears in an earlier shard");
  const auto a_miscounted = shard_file(0, 2, 4, {"x", "y"});
  CHECK(sy::gguf::check_split_set(std::vector<ShardRef>{{&a_miscounted, "m-1"}, {&b, "m-2"}}).message() ==
        "m-1: 'split.tensors.count' says 4 tensors, but the shards hold 3");
}

TEST_CASE("split file names: five digits each, shard within the count", "[gguf]") {
  const auto n = sy::gguf::parse_split_name("dir/model-00002-of-00003.gguf");
  REQUIRE(n.has_value());
  CHECK(n->prefix == "dir/model");
  CHECK(n->number == 2);
  CHECK(n->count == 3);
  CHECK(n->shard(1) == std::filesystem::path("dir/model-00001-of-00003.gguf"));
  for (const char* bad : {"model-00004-of-00003.gguf", "model-00000-of-00003.gguf", "model-0001-of-00003.gguf",
                          "model--0001-of-00003.gguf", "model-000a1-of-00003.gguf", "model-00001-of-00003.ggml",
                          "-00001-of-0000.gguf", "model.gguf", ""})
    CHECK_FALSE(sy::gguf::parse_split_name(bad).has_value());
}
