// The rules of convert's --outtype and of gguf split's shard plan (runtime/gguf_tools), from
// llama.cpp's convert_hf_to_gguf.py and gguf-split as documented there.
#include <catch2/catch.hpp>

#include "gguf_tools/convert.hpp"
#include "gguf_tools/split.hpp"

namespace gguf_tools_test {

sy::TensorDesc tensor(std::string name, std::vector<int64_t> shape, sy::StorageType type, uint64_t bytes = 0) {
  sy::TensorDesc d;
  d.name = std::move(name);
  d.shape = std::move(shape);
  d.type = type;
  d.bytes = bytes ? bytes : sy::tensor_bytes(type, d.shape).value_or(0);
  return d;
}

}  // namespace gguf_tools_test

using namespace gguf_tools_test;
using sy::StorageType;
namespace gt = sy::gguf_tools;

TEST_CASE("convert: --outtype names", "[gguf_tools]") {
  CHECK(gt::parse_outtype("auto") == gt::OutType::automatic);
  CHECK(gt::parse_outtype("bf16") == gt::OutType::bf16);
  CHECK(gt::parse_outtype("q8_0") == gt::OutType::q8_0);
  CHECK(!gt::parse_outtype("Q8_0"));
  CHECK(!gt::parse_outtype("q4_k_m"));
  CHECK(gt::outtype_names() == "auto, f32, f16, bf16, q8_0");
}

TEST_CASE("convert: the type of each tensor", "[gguf_tools]") {
  const auto w = tensor("blk.0.attn_q.weight", {256, 512}, StorageType::BF16);
  // auto keeps what GGUF stores; explicit types convert the matrices.
  CHECK(gt::convert_type(w, gt::OutType::automatic) == StorageType::BF16);
  CHECK(gt::convert_type(w, gt::OutType::f16) == StorageType::F16);
  CHECK(gt::convert_type(w, gt::OutType::f32) == StorageType::F32);
  CHECK(gt::convert_type(w, gt::OutType::q8_0) == StorageType::Q8_0);
  // Rows that are not whole Q8_0 blocks fall back to F16.
  CHECK(gt::convert_type(tensor("blk.0.x.weight", {48, 4}, StorageType::BF16), gt::OutType::q8_0) == StorageType::F16);
  // Vectors, routers and the SSM convolution stay F32 whatever the outtype.
  for (auto out : {gt::OutType::automatic, gt::OutType::f16, gt::OutType::bf16, gt::OutType::q8_0}) {
    CHECK(gt::convert_type(tensor("blk.0.attn_norm.weight", {256}, StorageType::BF16), out) == StorageType::F32);
    CHECK(gt::convert_type(tensor("blk.0.ffn_gate_inp.weight", {256, 8}, StorageType::BF16), out) == StorageType::F32);
    CHECK(gt::convert_type(tensor("blk.0.ssm_conv1d.weight", {4, 512}, StorageType::BF16), out) == StorageType::F32);
    CHECK(gt::convert_type(tensor("blk.0.ffn_gate_inp_shexp.weight", {256, 1}, StorageType::BF16), out) ==
          StorageType::F32);
  }
  // A type GGUF cannot store is written as F16 under auto, FP8 as BF16 (F16's range is smaller).
  CHECK(gt::convert_type(tensor("blk.0.attn_q.weight", {256, 512}, StorageType::FP8_E4M3_B128), gt::OutType::automatic) ==
        StorageType::BF16);
}

TEST_CASE("gguf split: shards by tensor count", "[gguf_tools]") {
  std::vector<sy::TensorDesc> ts;
  for (int i = 0; i < 10; ++i) ts.push_back(tensor("t" + std::to_string(i), {32}, StorageType::F32));
  gt::SplitOptions o;
  o.max_tensors = 4;
  const auto plan = gt::plan_split(ts, o);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0] == std::vector<size_t>{0, 1, 2, 3});
  CHECK(plan[2] == std::vector<size_t>{8, 9});
  o.no_tensor_first_split = true;
  const auto meta_first = gt::plan_split(ts, o);
  REQUIRE(meta_first.size() == 4);
  CHECK(meta_first[0].empty());
  CHECK(meta_first[1] == std::vector<size_t>{0, 1, 2, 3});
  o = {};
  CHECK(gt::plan_split(ts, o).size() == 1);  // the default 128 per shard
  CHECK(gt::plan_split({}, o).size() == 1);  // a file with metadata only is one shard
}

TEST_CASE("gguf split: shards by size", "[gguf_tools]") {
  std::vector<sy::TensorDesc> ts{tensor("a", {100}, StorageType::F32), tensor("b", {100}, StorageType::F32),
                                 tensor("big", {1000}, StorageType::F32), tensor("c", {10}, StorageType::F32)};
  gt::SplitOptions o;
  o.max_bytes = 900;  // a and b (800 bytes) fit; big (4000) alone passes the limit
  const auto plan = gt::plan_split(ts, o);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0] == std::vector<size_t>{0, 1});
  CHECK(plan[1] == std::vector<size_t>{2});
  CHECK(plan[2] == std::vector<size_t>{3});
}

TEST_CASE("gguf split: --split-max-size values", "[gguf_tools]") {
  CHECK(gt::parse_size("512M").value() == 512ull << 20);
  CHECK(gt::parse_size("2G").value() == 2ull << 30);
  CHECK(gt::parse_size("100k").value() == 100ull << 10);
  CHECK(gt::parse_size("4096").value() == 4096);
  for (const char* bad : {"", "M", "0", "-1G", "1.5G", "2T", "99999999999999G"}) {
    INFO(bad);
    auto r = gt::parse_size(bad);
    REQUIRE(!r);
    CHECK_THAT(r.status().message(), Catch::Contains("512M or 2G"));
  }
}
