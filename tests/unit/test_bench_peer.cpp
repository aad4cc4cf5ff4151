// bench --compare's peer: our flags in llama-bench's spelling, and llama-bench's JSON read
// back (a sample written here in the shape llama-bench -o json prints).
#include <catch2/catch.hpp>

#include <algorithm>

#include "bench/peer.hpp"

using namespace sy;

namespace {

bool has(const std::vector<std::string>& a, const std::string& flag, const std::string& value) {
  for (size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == flag && a[i + 1] == value) return true;
  return false;
}

}  // namespace

TEST_CASE("bench peer: one repetition of the row, flags translated", "[bench]") {
  bench::PeerFlags f;
  f.n_cpu_moe = "3";
  f.override_tensor = {"blk\\.{1,2}\\.ffn=CPU,exps=cpu"};
  f.cache_type_k = "q8_0";
  f.flash_attn = "on";
  f.no_mmap = true;
  const auto a = bench::peer_argv("/p/llama-bench", "m.gguf", {512, 64, 4096, 2}, f);
  CHECK(a.front() == "/p/llama-bench");
  CHECK(has(a, "-m", "m.gguf"));
  CHECK(has(a, "-p", "512"));
  CHECK(has(a, "-n", "64"));
  CHECK(has(a, "-d", "4096"));
  CHECK(has(a, "-t", "2"));
  CHECK(has(a, "-r", "1"));
  CHECK(has(a, "-o", "json"));
  CHECK(has(a, "-ngl", "0"));  // our default pipeline is the CPU alone
  CHECK(has(a, "-ncmoe", "3"));
  CHECK(has(a, "-ot", "blk\\.{1,2}\\.ffn=CPU;exps=cpu"));
  CHECK(has(a, "-ctk", "q8_0"));
  CHECK(has(a, "-fa", "on"));
  CHECK(has(a, "-lm", "none"));
  // Threads 0 (the pipeline's default) leaves the peer's default too.
  const auto b = bench::peer_argv("x", "m.gguf", {16, 4, 0, 0}, {});
  CHECK(std::find(b.begin(), b.end(), "-t") == b.end());
}

TEST_CASE("bench peer: llama-bench's JSON", "[bench]") {
  const std::string out = R"([
  {"build_commit": "abc1234", "build_number": 4000, "cpu_info": "AMD EPYC", "backends": "CPU",
   "model_type": "qwen3moe 30B.A3B Q4_K - Medium", "model_size": 1000, "model_n_params": 30000,
   "n_prompt": 512, "n_gen": 0, "n_depth": 0, "avg_ns": 2000000000, "avg_ts": 256.0,
   "samples_ns": [2000000000], "samples_ts": [256.0]},
  {"build_commit": "abc1234", "build_number": 4000, "n_prompt": 0, "n_gen": 64, "n_depth": 0,
   "avg_ts": 8.0, "samples_ns": [8000000000], "samples_ts": [8.0]}
])";
  auto r = bench::parse_peer_json(out);
  REQUIRE(r);
  CHECK(r->pp_ts == 256.0);
  CHECK(r->tg_ts == 8.0);
  CHECK(r->timed_s == Approx(10.0));
  CHECK(r->build_commit == "abc1234");
  CHECK(r->build_number == 4000);
  // Log lines before the JSON, one of them opening with '[' as the JSON does.
  auto logged = bench::parse_peer_json("[INFO] loading model\nbuild: abc\n" + out);
  REQUIRE(logged);
  CHECK(logged->tg_ts == 8.0);
  auto bad = bench::parse_peer_json("| model | size |");
  REQUIRE_FALSE(bad);
  CHECK(bad.status().message().find("not llama-bench JSON") != std::string::npos);
  auto missing = bench::parse_peer_json(R"([{"n_prompt": 1}])");
  REQUIRE_FALSE(missing);
  CHECK(missing.status().message().find("avg_ts") != std::string::npos);
}
