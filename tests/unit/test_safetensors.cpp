// The safetensors header parser (formats/hf/safetensors): a valid header reads back exactly,
// and each rule broken on its own (mutants of a valid header) is refused with a sentence
// naming the file and the field.
#include <catch2/catch.hpp>

#include "safetensors.hpp"
#include "safetensors_bytes.hpp"
#include "support.hpp"

using nlohmann::json;
using sy::test::StEntry;

namespace {

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

sy::Result<sy::hf::StHeader> parse(const std::string& file) { return sy::hf::parse_header(as_bytes(file), "w.safetensors"); }

// Two valid tensors: a [2, 3] F32 matrix (24 bytes) and a [4] BF16 vector (8 bytes).
std::vector<StEntry> valid() {
  return {{"a", "F32", {2, 3}, std::vector<unsigned char>(24, 1)}, {"b", "BF16", {4}, std::vector<unsigned char>(8, 2)}};
}

// The valid file with its header edited by `edit`.
std::string mutant(const std::function<void(json&)>& edit) {
  json h = json::parse(sy::test::safetensors_header(valid(), {{"format", "pt"}}).dump());
  edit(h);
  return sy::test::safetensors_with_header(h.dump(), sy::test::safetensors_data(valid()));
}

void refused(const std::string& file, const std::string& fragment) {
  auto r = parse(file);
  REQUIRE_FALSE(r.has_value());
  INFO(r.status().message());
  CHECK(r.status().message().rfind("w.safetensors", 0) == 0);  // the file first
  CHECK_THAT(r.status().message(), Catch::Contains(fragment));
}

}  // namespace

TEST_CASE("safetensors: a valid header reads back with absolute offsets and its metadata", "[safetensors]") {
  const std::string f = sy::test::safetensors_bytes(valid(), {{"format", "pt"}});
  auto r = parse(f);
  REQUIRE(r.has_value());
  const uint64_t data = f.size() - 32;
  CHECK(r->data_offset == data);
  CHECK(r->metadata == std::map<std::string, std::string>{{"format", "pt"}});
  REQUIRE(r->tensors.size() == 2);
  CHECK(r->tensors[0].name == "a");
  CHECK(r->tensors[0].dtype == sy::hf::Dtype::F32);
  CHECK(r->tensors[0].shape == std::vector<int64_t>{2, 3});
  CHECK(r->tensors[0].begin == data);
  CHECK(r->tensors[0].bytes == 24);
  CHECK(r->tensors[1].begin == data + 24);
  CHECK(r->tensors[1].bytes == 8);
}

TEST_CASE("safetensors: every dtype of the format is known with its size", "[safetensors]") {
  const std::vector<std::pair<std::string, size_t>> sizes = {
      {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I32", 4}, {"U8", 1}, {"I8", 1}, {"I64", 8}, {"F8_E4M3", 1},
      {"F8_E5M2", 1}, {"BOOL", 1}, {"I16", 2}, {"U16", 2}, {"U32", 4}, {"U64", 8}, {"F64", 8}};
  for (const auto& [name, size] : sizes) {
    INFO(name);
    auto r = parse(sy::test::safetensors_bytes({{"t", name, {3}, std::vector<unsigned char>(3 * size)}}));
    REQUIRE(r.has_value());
    CHECK(r->tensors[0].bytes == 3 * size);
  }
}

TEST_CASE("safetensors: empty tensors, scalars and no metadata are accepted", "[safetensors]") {
  auto r = parse(sy::test::safetensors_bytes({{"empty", "F32", {0, 5}, {}}, {"scalar", "F32", {}, {0, 0, 128, 63}}}));
  REQUIRE(r.has_value());
  CHECK(r->tensors[0].bytes == 0);
  CHECK(r->tensors[1].bytes == 4);
  CHECK(r->metadata.empty());
}

TEST_CASE("safetensors: the header length must fit the file and the limit", "[safetensors]") {
  refused("1234567", "fewer than the 8 of its header length");
  std::string huge(8, '\0');
  huge[4] = 1;  // 2^32 bytes
  refused(huge + "{}", "more than the 100000000 a safetensors header may have");
  std::string claims(8, '\0');
  claims[0] = 100;
  refused(claims + "{}", "the header length is 100 bytes, but only 2 follow it");
}

TEST_CASE("safetensors: the header must be a JSON object", "[safetensors]") {
  refused(sy::test::safetensors_with_header("[1, 2]", ""), "does not start with '{'");
  refused(sy::test::safetensors_with_header("{\"a\": {\"dtype\": ", ""), "not valid JSON");
  refused(sy::test::safetensors_with_header("{\"a\": \"\xff\"}", ""), "not valid JSON");
  refused(sy::test::safetensors_with_header("{\"a\": [[[[[[1]]]]]]}", ""), "nests values deeper");
}

TEST_CASE("safetensors: each tensor field is checked", "[safetensors]") {
  refused(mutant([](json& h) { h["a"]["dtype"] = "Q4_K"; }), "tensor 'a' has dtype 'Q4_K', which safetensors does not define");
  refused(mutant([](json& h) { h["a"].erase("dtype"); }), "tensor 'a' has no dtype string");
  refused(mutant([](json& h) { h["a"]["dtype"] = 7; }), "tensor 'a' has no dtype string");
  refused(mutant([](json& h) { h["a"]["shape"] = {2, -3}; }), "tensor 'a' has shape '[2,-3]': dimension 1 is '-3'");
  refused(mutant([](json& h) { h["a"]["shape"] = {2.5, 3}; }), "dimension 0 is '2.5'");
  refused(mutant([](json& h) { h["a"]["shape"] = "2x3"; }), "tensor 'a' has no shape array");
  refused(mutant([](json& h) { h["a"]["shape"] = {int64_t{1} << 40, int64_t{1} << 40}; }), "size overflows 64 bits");
  refused(mutant([](json& h) { h["a"]["shape"] = {3, 3}; }), "takes 36 bytes, but its data_offsets [0, 24] span 24");
  refused(mutant([](json& h) { h["a"]["dtype"] = "F16"; }), "tensor 'a' is F16 of shape '[2,3]', which takes 12 bytes");
  refused(mutant([](json& h) { h["a"].erase("data_offsets"); }), "tensor 'a' has no data_offsets pair");
  refused(mutant([](json& h) { h["a"]["data_offsets"] = {0, 24, 48}; }), "no data_offsets pair");
  refused(mutant([](json& h) { h["a"]["data_offsets"] = {24, 0}; }), "begin <= end");
  refused(mutant([](json& h) { h["a"]["data_offsets"] = {-8, 16}; }), "begin <= end");
  refused(mutant([](json& h) { h["b"]["data_offsets"] = {28, 36}; }),
          "tensor 'b' has data_offsets [28, 36], past the end of the data section (32 bytes)");
  refused(mutant([](json& h) { h["a"] = 5; }), "tensor 'a' is described by a number");
  refused(mutant([](json& h) { h[""] = h["b"]; }), "a tensor has an empty name");
}

TEST_CASE("safetensors: overlapping tensors and repeated names are refused", "[safetensors]") {
  refused(mutant([](json& h) {
            h["b"]["data_offsets"] = {16, 24};
          }),
          "tensors 'a' and 'b' overlap in the data section (data_offsets [0, 24] and [16, 24])");
  // A name twice in the text: nlohmann would keep only the last one.
  const std::string twice = R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
                            R"( "a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})";
  refused(sy::test::safetensors_with_header(twice, "xy"), "tensor 'a' appears twice in the header");
}

TEST_CASE("safetensors: __metadata__ must map names to strings", "[safetensors]") {
  refused(mutant([](json& h) { h["__metadata__"]["step"] = 5; }), "__metadata__ entry 'step' is a number");
  refused(mutant([](json& h) { h["__metadata__"] = "pt"; }), "__metadata__ is a string");
}

TEST_CASE("safetensors: a name that is not UTF-8 or holds control bytes is escaped in messages", "[safetensors]") {
  // JSON escapes give the parser valid text whose value holds a control character.
  auto r = parse(sy::test::safetensors_with_header(R"({"a\u0001b": {"dtype": "X", "shape": [], "data_offsets": [0, 0]}})", ""));
  REQUIRE_FALSE(r.has_value());
  CHECK_THAT(r.status().message(), Catch::Contains("tensor 'a\\x01b' has dtype 'X'"));
}

TEST_CASE("safetensors: a file maps in place and finds its tensors by name", "[safetensors]") {
  sy::test::TempDir dir;
  sy::test::write_bytes(dir / "m.safetensors", sy::test::safetensors_bytes(valid()));
  auto f = sy::hf::SafetensorsFile::open(dir / "m.safetensors");
  REQUIRE(f.has_value());
  const auto* b = (*f)->find("b");
  REQUIRE(b != nullptr);
  const auto bytes = (*f)->data(*b);
  REQUIRE(bytes.size() == 8);
  CHECK(static_cast<int>(bytes[0]) == 2);
  CHECK((*f)->find("c") == nullptr);
  auto missing = sy::hf::SafetensorsFile::open(dir / "none.safetensors");
  REQUIRE_FALSE(missing.has_value());
  CHECK_THAT(missing.status().message(), Catch::Contains("none.safetensors"));
}
