// Topology files are untrusted input: each malformed value is refused with the file and
// the reason (never a JSON exception, a division by zero or an out-of-range cast), and a
// well-formed one gives the shapes worked out by hand below.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "synth/topology.hpp"

using nlohmann::json;
namespace synth = sy::synth;

namespace {

// A two-layer llama: hidden 64, 4 query heads of 16 (o_proj input 64), 2 KV heads (k_proj
// output 32), feed-forward 128, vocabulary 1000, separate lm_head.
json small_llama() {
  json tensors = {{"model.embed_tokens.weight", {1000, 64}}, {"lm_head.weight", {1000, 64}}};
  for (int il = 0; il < 2; ++il) {
    const std::string l = "model.layers." + std::to_string(il) + ".";
    tensors[l + "self_attn.q_proj.weight"] = {64, 64};
    tensors[l + "self_attn.k_proj.weight"] = {32, 64};
    tensors[l + "self_attn.v_proj.weight"] = {32, 64};
    tensors[l + "self_attn.o_proj.weight"] = {64, 64};
    tensors[l + "mlp.gate_proj.weight"] = {128, 64};
  }
  return {{"format", "tensorfs-topology-v2"},
          {"name", "small"},
          {"components", {{{"name", "lm"}, {"tensors", tensors}}}},
          {"config", {{"num_attention_heads", 4}}}};
}

std::string parse_error(const json& j) {
  auto r = synth::parse_topology(j.dump(), "t.json");
  REQUIRE_FALSE(r);
  return r.status().message();
}

}  // namespace

TEST_CASE("topology file: a small llama gives the shapes worked out by hand", "[topology]") {
  auto r = synth::parse_topology(small_llama().dump(), "t.json");
  REQUIRE(r);
  CHECK(r->arch == "llama");
  CHECK(r->n_vocab == 1000);
  CHECK(r->n_embd == 64);
  CHECK(r->n_layer == 2);
  CHECK(r->head_dim == 16);
  CHECK(r->n_head == 4);
  CHECK(r->n_head_kv == 2);
  CHECK(r->n_ff == 128);
  CHECK_FALSE(r->tied_embeddings);
}

TEST_CASE("topology file: config values of the wrong type or range are refused by key", "[topology]") {
  struct Case {
    const char* key;
    json value;
    const char* message;
  } cases[] = {
      {"num_attention_heads", 0, "t.json: config.num_attention_heads must be an integer from 1 to 65536, got 0"},
      {"num_attention_heads", "four", "t.json: config.num_attention_heads must be an integer from 1 to 65536, got \"four\""},
      {"head_dim", -16, "t.json: config.head_dim must be an integer from 1 to 4194304, got -16"},
      {"head_dim", 1.5, "t.json: config.head_dim must be an integer from 1 to 4194304, got 1.5"},
      {"max_position_embeddings", 18446744073709551615ull,
       "t.json: config.max_position_embeddings must be an integer from 1 to 1073741824, got 18446744073709551615"},
      {"partial_rotary_factor", 1e300, "t.json: config.partial_rotary_factor must be a number from 0 to 1, got 1e+300"},
      {"rope_theta", "big", "t.json: config.rope_theta must be a number from 0.001 to 1e+12, got \"big\""},
      {"norm_topk_prob", 1, "t.json: config.norm_topk_prob must be true or false, got 1"},
  };
  for (const auto& c : cases) {
    INFO(c.key);
    json j = small_llama();
    j["config"][c.key] = c.value;
    CHECK(parse_error(j) == c.message);
  }
}

TEST_CASE("topology file: malformed structure is refused with the reason", "[topology]") {
  json j = small_llama();
  j["format"] = 2;
  CHECK(parse_error(j) == "t.json: 'format' must be \"tensorfs-topology-v2\" (a file of Hugging Face tensor shapes)");

  j = small_llama();
  j["components"][0]["tensors"]["model.embed_tokens.weight"] = {18446744073709551615ull, 64};
  CHECK(parse_error(j) == "t.json: the shape of 'model.embed_tokens.weight' has a dimension that is not an integer "
                          "from 1 to 16777216");

  j = small_llama();
  j["components"][0]["tensors"]["model.layers.99999999999999999999.x"] = {1};
  CHECK(parse_error(j) == "t.json: layer number 99999999999999999999 is beyond the 65536 layers a topology may have "
                          "('model.layers.99999999999999999999.x')");

  j = small_llama();
  j["name"] = 5;  // not a name: the file's stem stands in
  auto r = synth::parse_topology(j.dump(), "dir/my-model.json");
  REQUIRE(r);
  CHECK(r->name == "my-model");

  CHECK(parse_error(json::array()) == "t.json: is not valid JSON (a topology file is one JSON object)");
}

TEST_CASE("topology file: a directory or a missing file is named as such", "[topology]") {
  sy::test::TempDir dir;
  auto r = synth::load_topology_file(dir.path());
  REQUIRE_FALSE(r);
  CHECK(r.status().message() == "the topology file '" + dir.path().string() + "' is a directory; give a file inside it");
  r = synth::resolve_topology((dir / "nope.json").string());
  REQUIRE_FALSE(r);
  CHECK(r.status().message() == "the topology file '" + (dir / "nope.json").string() + "' does not exist");
}

TEST_CASE("topology scaling stays within the limits, naming the flag", "[topology]") {
  auto t = synth::builtin_topology("qwen3-8b");
  REQUIRE(t);
  CHECK(synth::scale_topology(*t, 65537, 0, 0).message() == "--layers is 65537; it must be from 0 to 65536");
  CHECK(synth::scale_topology(*t, 0, 0, 16777217).message() == "--vocab is 16777217; it must be from 0 to 16777216");
  // 65536 layers of qwen3-8b (about 0.2e9 weights each) is about 1.4e13: within 2^48.
  CHECK(synth::scale_topology(*t, 65536, 0, 0, /*grow=*/true));
  auto m = synth::builtin_topology("qwen3-30b-a3b");
  REQUIRE(m);
  // 65536 layers of 65536 experts of 3 x 2048 x 768 weights is about 2e16, past 2^48 (about 2.8e14).
  const auto st = synth::scale_topology(*m, 65536, 65536, 0, /*grow=*/true);
  REQUIRE_FALSE(st);
  CHECK(st.message().find("more than the 2.81e+14 (2^48) a topology may describe") != std::string::npos);
}

TEST_CASE("topology scaling does not grow a model past its real shape without grow", "[topology]") {
  // Qwen3-8B has 36 layers and Qwen3-30B-A3B 128 routed experts (their published config.json).
  auto t = synth::builtin_topology("qwen3-8b");
  REQUIRE(t);
  CHECK(synth::scale_topology(*t, 37, 0, 0).message() ==
        "--layers 37 is more than the 36 layers qwen3-8b has; give at most 36, or add --grow to repeat its layers past "
        "the real model");
  REQUIRE(synth::scale_topology(*t, 36, 0, 0));
  CHECK(t->n_layer == 36);
  REQUIRE(synth::scale_topology(*t, 40, 0, 0, /*grow=*/true));
  CHECK(t->n_layer == 40);
  auto m = synth::builtin_topology("qwen3-30b-a3b");
  REQUIRE(m);
  CHECK(synth::scale_topology(*m, 0, 129, 0).message() ==
        "--experts 129 is more than the 128 routed experts per layer qwen3-30b-a3b has; give at most 128, or add --grow "
        "to add experts the real model does not have");
  REQUIRE(synth::scale_topology(*m, 0, 256, 0, /*grow=*/true));
  CHECK(m->n_expert == 256);
}
