// Bytes one decode step reads, against hand computations from the synth demo topologies'
// published dimensions (F32: 4 bytes an element) and a hand-built table for tied embeddings.
#include <catch2/catch.hpp>

#include "bench/decode_bytes.hpp"
#include "synth/synth.hpp"

using namespace sy;

TEST_CASE("bench decode bytes: demo-llama in f32, by hand", "[bench]") {
  auto t = synth::builtin_topology("demo-llama");
  REQUIRE(t);
  auto m = synth::describe(*t, "f32");
  REQUIRE(m);
  // vocab 512, embd 256, 4 layers, 4 heads of 64 (q: 256), 2 kv heads (k, v: 128), ff 256.
  // Per layer: two norms (256 each), q and o (256 x 256), k and v (256 x 128), gate, up and
  // down (256 x 256): 512 + 2*65536 + 2*32768 + 3*65536 = 393728 floats.
  const double dense = 4 * 393728.0 * 4;
  const auto b = bench::decode_bytes(*m, 1000, 0, 10.5);
  CHECK(b.dense == dense);
  CHECK(b.experts == 0);
  CHECK(b.head == 512 * 256 * 4.0);   // output.weight
  CHECK(b.embd_row == 256 * 4.0);     // one token's embedding
  CHECK(b.other == 256 * 4.0);        // output_norm
  CHECK(b.kv == 10500.0);
  CHECK(b.state == 0);
  CHECK(b.total() == dense + 512 * 256 * 4.0 + 2 * 1024.0 + 10500.0);
}

TEST_CASE("bench decode bytes: the demo's routed experts count n_used / n_expert", "[bench]") {
  auto t = synth::builtin_topology("demo");
  REQUIRE(t);
  auto m = synth::describe(*t, "f32");
  REQUIRE(m);
  // 4 layers x gate, up, down experts of 8 x 128 x 256 floats; 2 of the 8 experts run.
  const double all_experts = 4 * 3 * (8 * 128 * 256 * 4.0);
  const auto b = bench::decode_bytes(*m, 0, 777, 0);
  CHECK(b.experts == all_experts * 2 / 8);
  CHECK(b.head == 512 * 256 * 4.0);
  CHECK(b.embd_row == 256 * 4.0);
  CHECK(b.state == 2 * 777.0);  // read and written
  // Everything else in the blocks is dense: the file's bytes less the embedding table, the
  // head, output_norm and the whole expert tensors.
  double file = 0;
  for (const auto& x : m->tensors) file += static_cast<double>(x.bytes);
  CHECK(b.dense == file - 512 * 256 * 4.0 * 2 - 256 * 4.0 - all_experts);
}

TEST_CASE("bench decode bytes: tied embeddings are the head; prediction blocks never run", "[bench]") {
  planner::ModelDesc m;
  m.hp.n_vocab = 10;
  m.hp.n_layer = 1;
  m.tensors = {{"token_embd.weight", {4, 10}, StorageType::F32, 160},
               {"blk.0.attn_q.weight", {4, 4}, StorageType::F32, 64},
               {"blk.1.attn_q.weight", {4, 4}, StorageType::F32, 64}};  // block 1: n_layer is 1
  const auto b = bench::decode_bytes(m, 0, 0, 0);
  CHECK(b.head == 160);
  CHECK(b.embd_row == 0);
  CHECK(b.dense == 64);
  CHECK(b.total() == 224);
}

TEST_CASE("bench decode bytes: a generation run's mean context", "[bench]") {
  // Steps see d+1 .. d+n positions: for d = 100, n = 4 the mean is (101+102+103+104)/4.
  CHECK(bench::mean_generation_context(100, 4) == 102.5);
  CHECK(bench::mean_generation_context(0, 1) == 1.0);
}
