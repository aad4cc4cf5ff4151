// synth against the shared data: the built-in qwen3.6-35b-a3b is exactly what the real
// checkpoint's tensor shapes say, and a tokenizer.json embedded by synth --tokenizer
// tokenizes every Qwen3 case as Hugging Face does (NFC included, through our own key).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model.hpp"
#include "support.hpp"
#include "synth/synth.hpp"
#include "tokenizer/tokenizer.hpp"

namespace fs = std::filesystem;
using namespace sy;

TEST_CASE("topology: the qwen3.6-35b-a3b shapes file gives the built-in topology", "[synth]") {
  auto file = synth::load_topology_file(fs::path(SY_SHARED_DIR) / "topologies/qwen3.6-35b-a3b.hf-shapes.json");
  INFO(file.status().message());
  REQUIRE(file);
  auto built = synth::builtin_topology("qwen3.6-35b-a3b");
  REQUIRE(built);
  const auto& a = *file;
  const auto& b = *built;
  CHECK(a.arch == b.arch);
  CHECK(a.n_vocab == b.n_vocab);
  CHECK(a.n_embd == b.n_embd);
  CHECK(a.n_layer == b.n_layer);  // the language model's 40; the MTP head is not a layer
  CHECK(a.n_head == b.n_head);
  CHECK(a.n_head_kv == b.n_head_kv);
  CHECK(a.head_dim == b.head_dim);
  CHECK(a.n_expert == b.n_expert);
  CHECK(a.n_expert_used == b.n_expert_used);
  CHECK(a.n_ff_exp == b.n_ff_exp);
  CHECK(a.n_ff_shexp == b.n_ff_shexp);
  CHECK(a.qk_norm == b.qk_norm);
  CHECK(a.attn_output_gate == b.attn_output_gate);
  CHECK(a.tied_embeddings == b.tied_embeddings);
  CHECK(a.full_attn_interval == b.full_attn_interval);
  CHECK(a.ssm_conv_kernel == b.ssm_conv_kernel);
  CHECK(a.ssm_state == b.ssm_state);
  CHECK(a.ssm_groups == b.ssm_groups);
  CHECK(a.ssm_v_heads == b.ssm_v_heads);
  CHECK(a.n_rot == b.n_rot);

  // Every language-model weight of the checkpoint has its GGUF counterpart with the same
  // element count (experts: gate_up_proj splits into gate and up).
  std::ifstream in(fs::path(SY_SHARED_DIR) / "topologies/qwen3.6-35b-a3b.hf-shapes.json");
  const auto j = nlohmann::json::parse(in);
  uint64_t hf = 0;
  for (const auto& [name, shape] : j["components"][0]["tensors"].items()) {
    if (name.rfind("model.language_model.", 0) != 0 && name != "lm_head.weight") continue;
    uint64_t n = 1;
    for (const auto& d : shape) n *= d.get<uint64_t>();
    hf += n;
  }
  auto desc = synth::describe(b, "f32");
  REQUIRE(desc);
  uint64_t ours = 0;
  for (const auto& t : desc->tensors) ours += t.elements();
  CHECK(ours == hf);
}

TEST_CASE("topology: synth --tokenizer embeds the real Qwen3 tokenizer", "[synth][tokenizer]") {
  test::TempDir dir;
  auto t = synth::builtin_topology("qwen3-0.6b");
  REQUIRE(t);
  REQUIRE(synth::scale_topology(*t, 1, 0, 0));
  synth::SynthOptions o;
  o.tokenizer_json = fs::path(SY_SHARED_DIR) / "tokenizers/qwen3/tokenizer.json";
  const fs::path p = dir / "q.gguf";
  auto st = synth::write_synth_model(p, *t, o);
  INFO(st.message());
  REQUIRE(st);
  auto m = gguf::Model::open(p);
  REQUIRE(m.has_value());
  auto tk = tok::Tokenizer::from_gguf(m.value()->metadata());
  INFO(tk.status().message());
  REQUIRE(tk);
  CHECK(m.value()->metadata().get_string("tokenizer.chat_template").has_value());
  std::ifstream in(fs::path(SY_SHARED_DIR) / "tokenizers/qwen3/cases.jsonl");
  std::string line;
  int n = 0, same = 0;
  while (std::getline(in, line)) {
    const auto c = nlohmann::json::parse(line);
    const auto want = c["ids"].get<std::vector<int32_t>>();
    same += (*tk)->encode(c["text"].get<std::string>(), c["add_special_tokens"], c["parse_special"]) == want;
    ++n;
  }
  CHECK(n == 268);
  CHECK(same == n);
}
