// Hyper-parameters are checked at load against each other and against the tensor shapes,
// and a disagreement is a sentence naming the key, the value found and the value expected,
// in `run` (the engine's load) and in `plan` (the header alone). The expected values come
// from the shapes synth writes for the demo topologies (docs/synth.md) and from llama.cpp's
// loader rules (docs/engine.md, "Tensor layouts").
#include <catch2/catch.hpp>

#include "engine_support.hpp"
#include "gguf_rewrite.hpp"
#include "planner/describe.hpp"
#include "registry/registry.hpp"
#include "support.hpp"
#include "synth/synth.hpp"

using namespace sy;
namespace fs = std::filesystem;
using test::Tensors;

namespace {

struct Models {
  test::TempDir dir;
  fs::path llama, moe, hybrid;
  Models() {
    llama = dir / "llama.gguf";
    hybrid = dir / "hybrid.gguf";
    moe = dir / "moe.gguf";
    REQUIRE(synth::write_demo_model(llama, "demo-llama", "q8_0", false).is_ok());
    REQUIRE(synth::write_demo_model(hybrid, "demo", "q8_0", false).is_ok());
    auto t = synth::builtin_topology("demo-llama");
    REQUIRE(t.has_value());
    t->arch = "qwen3moe", t->qk_norm = true, t->n_ff = 0, t->n_expert = 8, t->n_expert_used = 2, t->n_ff_exp = 128;
    synth::SynthOptions o;
    o.tokenizer = false;
    REQUIRE(synth::write_synth_model(moe, *t, o).is_ok());
  }
  /// `from` with metadata key `key` set to `v`.
  fs::path with(const fs::path& from, const std::string& key, MetaValue v) {
    Tensors t = Tensors::read(from);
    t.set(key, std::move(v));
    const fs::path p = dir / ("edited-" + std::to_string(++n) + ".gguf");
    t.write(p);
    return p;
  }
  int n = 0;
};

/// The load error of `run` (the engine) and of `plan -m` (header only); both must say `what`.
void refused(const fs::path& p, const std::vector<std::string>& parts) {
  std::string run_error;
  try {
    test::bring_up_model(p);
  } catch (const std::exception& e) {
    run_error = e.what();
  }
  static registry::Registry reg(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  auto desc = planner::describe_file(reg, p, "");
  REQUIRE_FALSE(desc.has_value());
  const std::string plan_error = desc.status().message();
  for (const auto& part : parts) {
    INFO("run: " << run_error);
    CHECK_THAT(run_error, Catch::Contains(part));
    INFO("plan: " << plan_error);
    CHECK_THAT(plan_error, Catch::Contains(part));
  }
}

}  // namespace

TEST_CASE("hparams: the unmodified demo models load", "[model][hparams]") {
  Models m;
  for (const auto& p : {m.llama, m.moe, m.hybrid}) CHECK_NOTHROW(test::bring_up_model(p));
}

TEST_CASE("hparams: attention keys that disagree with the q/k/v/o shapes", "[model][hparams]") {
  Models m;
  // demo-llama: 4 heads of 64 over an embedding of 256, 2 KV heads.
  refused(m.with(m.llama, "llama.attention.head_count", uint32_t{8}),
          {"blk.0.attn_q.weight is [256, 256]", "llama.attention.head_count = 8 x llama.attention.key_length = 64 gives 512"});
  refused(m.with(m.llama, "llama.attention.key_length", uint32_t{128}),
          {"blk.0.attn_q.weight is [256, 256]", "llama.attention.key_length = 128 gives 512"});
  refused(m.with(m.llama, "llama.attention.value_length", uint32_t{128}),
          {"blk.0.attn_v.weight is [256, 128]", "llama.attention.value_length = 128 gives 256"});
  refused(m.with(m.llama, "llama.attention.head_count_kv", uint32_t{1}),
          {"blk.0.attn_k.weight is [256, 128]", "llama.attention.head_count_kv = 1", "gives 64"});
  refused(m.with(m.llama, "llama.attention.head_count_kv", uint32_t{3}),
          {"llama.attention.head_count (4)", "llama.attention.head_count_kv (3)", "must divide"});
  refused(m.with(m.llama, "llama.attention.head_count", uint32_t{0}),
          {"llama.attention.head_count is 0; it must be between 1 and"});
}

TEST_CASE("hparams: head size, rope dims and their defaults", "[model][hparams]") {
  Models m;
  refused(m.with(m.llama, "llama.rope.dimension_count", uint32_t{96}),
          {"llama.rope.dimension_count is 96", "no larger than the head size", "(64)"});
  refused(m.with(m.llama, "llama.rope.dimension_count", uint32_t{31}), {"llama.rope.dimension_count is 31", "even"});
  // llama.cpp writes yarn's factor beside the type; taken as linear it would be wrong everywhere.
  refused(m.with(m.llama, "llama.rope.scaling.type", std::string("yarn")),
          {"llama.rope.scaling.type is 'yarn'", "does not compute yet"});
  CHECK_NOTHROW(test::bring_up_model(m.with(m.llama, "llama.rope.scaling.type", std::string("linear"))));
  // Without key_length the head size is embedding_length / head_count, which must divide.
  Tensors t = Tensors::read(m.llama);
  t.kv.erase(std::remove_if(t.kv.begin(), t.kv.end(), [](const auto& kv) { return kv.first == "llama.attention.key_length"; }),
             t.kv.end());
  t.set("llama.attention.head_count", uint32_t{3});
  t.set("llama.attention.head_count_kv", uint32_t{3});
  t.write(m.dir / "no-key-length.gguf");
  refused(m.dir / "no-key-length.gguf", {"llama.embedding_length (256) is not a multiple of llama.attention.head_count (3)"});
}

TEST_CASE("hparams: embedding, vocabulary and feed-forward widths against the tensors", "[model][hparams]") {
  Models m;
  refused(m.with(m.llama, "llama.embedding_length", uint32_t{300}),
          {"llama.embedding_length is 300 but token_embd.weight is [256, 512]"});
  refused(m.with(m.llama, "llama.vocab_size", uint32_t{1000}), {"llama.vocab_size is 1000", "512 tokens"});
  refused(m.with(m.llama, "llama.feed_forward_length", uint32_t{100}),
          {"blk.0.ffn_gate.weight is [256, 256]", "llama.feed_forward_length = 100"});
  refused(m.with(m.llama, "llama.embedding_length", std::string("256")),
          {"llama.embedding_length is a string; it must be an integer"});
  refused(m.with(m.llama, "llama.attention.layer_norm_rms_epsilon", -1.0f),
          {"llama.attention.layer_norm_rms_epsilon is -1", "above 0"});
}

TEST_CASE("hparams: expert counts against each other and the expert tensors", "[model][hparams]") {
  Models m;
  refused(m.with(m.moe, "qwen3moe.expert_used_count", uint32_t{9}),
          {"qwen3moe.expert_used_count is 9; it must be between 1 and qwen3moe.expert_count (8)"});
  refused(m.with(m.moe, "qwen3moe.expert_used_count", uint32_t{0}), {"qwen3moe.expert_used_count is 0"});
  refused(m.with(m.moe, "qwen3moe.expert_count", uint32_t{0}), {"qwen3moe.expert_count is 0", "at least 1"});
  refused(m.with(m.moe, "qwen3moe.expert_count", uint32_t{16}),
          {"blk.0.ffn_gate_inp.weight is [256, 8]", "qwen3moe.expert_count = 16"});
  refused(m.with(m.moe, "qwen3moe.expert_feed_forward_length", uint32_t{64}),
          {"blk.0.ffn_gate_exps.weight is [256, 128, 8]", "qwen3moe.expert_feed_forward_length = 64"});
}

TEST_CASE("hparams: the hybrid's linear-attention sizes against its tensors", "[model][hparams]") {
  Models m;
  // demo: 2 key heads and 4 value heads of 32: channels 2 x 2 x 32 + 4 x 32 = 256.
  refused(m.with(m.hybrid, "qwen35moe.ssm.state_size", uint32_t{16}),
          {"blk.0.attn_qkv.weight is [256, 256]", "qwen35moe.ssm.state_size = 16"});
  refused(m.with(m.hybrid, "qwen35moe.ssm.time_step_rank", uint32_t{3}),
          {"qwen35moe.ssm.time_step_rank (3 value heads) must be a multiple of qwen35moe.ssm.group_count (2"});
}

TEST_CASE("hparams: an absurd block_count is refused at once, naming the key and both counts", "[model][hparams]") {
  Models m;
  // Found quickly: no table of 2^31 layers is ever allocated (run used to die in bad_alloc,
  // plan to compute for minutes).
  refused(m.with(m.llama, "llama.block_count", uint32_t{0x80000000u}),
          {"llama.block_count is 2147483648; it must be between 1 and 65536"});
  refused(m.with(m.llama, "llama.block_count", uint32_t{1000000000u}), {"llama.block_count is 1000000000"});
  refused(m.with(m.llama, "llama.block_count", uint64_t{~0ull}), {"llama.block_count is 18446744073709551615"});
  refused(m.with(m.llama, "llama.block_count", uint32_t{60000}),
          {"llama.block_count is 60000 but the file has tensors for 4 blocks (blk.0 to blk.3)"});
  refused(m.with(m.llama, "llama.block_count", uint32_t{2}),
          {"llama.block_count is 2 but the file has tensors for 4 blocks"});
  refused(m.with(m.llama, "llama.block_count", int32_t{-1}), {"llama.block_count is -1"});
}

TEST_CASE("hparams: an architecture name that is not UTF-8 is refused, escaped", "[model][hparams]") {
  // Found by the gguf fuzz target: the name reached messages ("lacks the hyper-parameter
  // l\x98ama.embedding_length") as raw bytes. Expected text: Python's
  // b"l\x98ama".decode("utf-8", "backslashreplace") is "l\\x98ama".
  Models m;
  refused(m.with(m.llama, "general.architecture", std::string("l\x98" "ama")),
          {"general.architecture 'l\\x98ama' is not UTF-8, so it names no architecture"});
}
