// The checks run and `validate -m` make against a model's header before loading anything:
// token ids in the vocabulary, a tokenizer that fits, the context's memory, the trained
// length. The expected figures come from the model file's own header keys and the KV
// formula (layers x 2 x KV heads x head size x bytes x positions), not from the planner.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "engine/preflight.hpp"
#include "model/source.hpp"
#include "pipeline/load.hpp"
#include "pipeline/validate.hpp"
#include "planner/describe.hpp"
#include "support.hpp"
#include "synth/synth.hpp"
#include "tokenizer/unicode.hpp"

using namespace sy;
namespace fs = std::filesystem;

namespace {

registry::Registry& build_registry() {
  static registry::Registry reg(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build tree"}});
  return reg;
}

// The demo models, written once for the whole run.
const fs::path& demo(const std::string& topology) {
  static test::TempDir dir;
  static std::map<std::string, fs::path> written;
  auto it = written.find(topology);
  if (it == written.end()) {
    const fs::path p = dir / (topology + ".gguf");
    REQUIRE(synth::write_demo_model(p, topology, "q8_0", false).is_ok());
    it = written.emplace(topology, p).first;
  }
  return it->second;
}

// A header key of the file, read through the format plugin (not the planner).
int64_t header_int(const fs::path& model, const std::string& key) {
  auto src = model::open_source(build_registry(), model);
  REQUIRE(src.has_value());
  auto v = src->source->metadata().get_int(key);
  INFO(key);
  REQUIRE(v.has_value());
  return *v;
}

// The head size: attention.key_length, or embedding_length / head_count without it (GGUF's rule).
int64_t header_head(const fs::path& model, const std::string& arch) {
  auto src = model::open_source(build_registry(), model);
  REQUIRE(src.has_value());
  const auto& md = src->source->metadata();
  if (auto k = md.get_int(arch + ".attention.key_length")) return *k;
  return header_int(model, arch + ".embedding_length") / header_int(model, arch + ".attention.head_count");
}

// Rows of token_embd.weight: the model's vocabulary as the file stores it.
int64_t header_vocab(const fs::path& model) {
  auto src = model::open_source(build_registry(), model);
  REQUIRE(src.has_value());
  for (const auto& t : src->source->tensors())
    if (t.name == "token_embd.weight") return static_cast<int64_t>(t.shape[1]);
  FAIL("no token_embd.weight");
  return 0;
}

pipeline::Pipeline load(const fs::path& model, const std::string& rest, const std::vector<std::string>& sets = {}) {
  const std::string yaml = "model: { path: " + nlohmann::json(model.string()).dump() + " }\n" +
                           "backends: [ { plugin: cpu } ]\n" + rest;
  const std::vector<fs::path> dirs{SY_BUILD_PLUGIN_DIR};
  pipeline::LoadOptions lo;
  lo.sets = sets;
  lo.fixed_search_dirs = &dirs;
  auto lr = pipeline::load_pipeline_from_text(yaml, "p.yaml", lo);
  for (const auto& d : lr.diagnostics) INFO(pipeline::format_diagnostic(d));
  REQUIRE(lr.ok());
  return lr.pipeline;
}

std::vector<pipeline::Diagnostic> check(const pipeline::Pipeline& p, uint64_t available) {
  auto m = planner::describe_file(build_registry(), p.model.path);
  INFO(m.status().message());
  REQUIRE(m.has_value());
  return engine::preflight(p, *m, build_registry(), {available});
}

std::string at(const pipeline::Location& l) { return std::to_string(l.line) + ":" + std::to_string(l.column); }

constexpr uint64_t kGiB = uint64_t{1} << 30;

}  // namespace

TEST_CASE("preflight: logit_bias token ids outside the vocabulary are errors at the item", "[preflight]") {
  const fs::path& m = demo("demo-llama");
  const int64_t n_vocab = header_vocab(m);
  const std::string last = std::to_string(n_vocab - 1), past = std::to_string(n_vocab);
  const auto p = load(m, "sampling:\n"
                         "  - { logit_bias: { bias: [\"" + last + ":+1\", \"" + past + ":-inf\"] } }\n"
                         "  - greedy\n");
  const auto d = check(p, 64 * kGiB);
  REQUIRE(d.size() == 1);
  CHECK_FALSE(d[0].warning);
  CHECK(d[0].message.rfind("token " + past + " is outside the model's vocabulary (0.." + last + ")", 0) == 0);
  // Line 4 (after model, backends and sampling); the second item's quote, counted above.
  const size_t col = std::string("  - { logit_bias: { bias: [\"" + last + ":+1\", ").size() + 1;
  CHECK(at(d[0].loc) == "4:" + std::to_string(col));
}

TEST_CASE("preflight: a tokenizer with more ids than the model has rows is an error at model.tokenizer", "[preflight]") {
  const fs::path& m = demo("demo-llama");
  const int64_t n_vocab = header_vocab(m);
  test::TempDir dir;
  // Byte-level BPE: the 256 byte tokens, then plain tokens up to `n` ids in all.
  auto tokenizer = [&](int64_t n) {
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) vocab[tok::byte_to_unicode()[static_cast<size_t>(b)]] = b;
    for (int64_t i = 256; i < n; ++i) vocab["tok" + std::to_string(i)] = i;
    const fs::path f = dir / ("t" + std::to_string(n)) / "tokenizer.json";
    test::write_file(f, nlohmann::json{{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}}.dump());
    return f;
  };
  const fs::path fits = tokenizer(n_vocab), too_big = tokenizer(n_vocab + 88);
  CHECK(check(load(m, "", {"model.tokenizer=" + fits.string()}), 64 * kGiB).empty());
  const auto p = load(m, "", {"model.tokenizer=" + too_big.string()});
  const auto d = check(p, 64 * kGiB);
  REQUIRE(d.size() == 1);
  CHECK(d[0].message.find("has " + std::to_string(n_vocab + 88) + " tokens (ids 0.." + std::to_string(n_vocab + 87) +
                          "), but the model has " + std::to_string(n_vocab) + " rows") != std::string::npos);
  CHECK(d[0].loc.file == p.where("model.tokenizer").file);
  CHECK(at(d[0].loc) == at(p.where("model.tokenizer")));
}

TEST_CASE("preflight: KV cache and recurrent state follow the header and the formula", "[preflight]") {
  SECTION("llama: every layer keeps K and V") {
    const fs::path& m = demo("demo-llama");
    const int64_t layers = header_int(m, "llama.block_count"), kv_heads = header_int(m, "llama.attention.head_count_kv");
    const int64_t head = header_head(m, "llama");
    const auto per_position = static_cast<uint64_t>(layers * 2 * kv_heads * head * 2);  // f16: 2 bytes
    auto desc = planner::describe_file(build_registry(), m);
    REQUIRE(desc.has_value());
    // 1000 positions are allocated as 32 blocks of 32 (1024), for each of 3 sequences.
    const auto p = load(m, "context: { length: 1000, parallel: 3 }\n");
    const auto c = engine::context_memory(p, *desc);
    CHECK(c.kv_per_position == per_position);
    CHECK(c.kv == per_position * 1024 * 3);
    CHECK(c.recurrent == 0);
    CHECK(c.weights == 0);  // mapped
  }
  SECTION("qwen35moe hybrid: one layer in full_attention_interval keeps K and V, the others recurrent state") {
    const fs::path& m = demo("demo");
    const std::string a = "qwen35moe.";
    const int64_t layers = header_int(m, a + "block_count"), interval = header_int(m, a + "full_attention_interval");
    const int64_t kv_heads = header_int(m, a + "attention.head_count_kv"), head = header_head(m, "qwen35moe");
    const int64_t kernel = header_int(m, a + "ssm.conv_kernel"), state = header_int(m, a + "ssm.state_size");
    const int64_t groups = header_int(m, a + "ssm.group_count"), v_heads = header_int(m, a + "ssm.time_step_rank");
    const int64_t full = layers / interval, linear = layers - full;
    // Per linear layer and sequence, f32: the conv state over q, k (groups x state) and v
    // (v_heads x state) channels, and one state x state matrix per value head.
    const int64_t state_floats = (kernel - 1) * (2 * groups * state + v_heads * state) + state * state * v_heads;
    auto desc = planner::describe_file(build_registry(), m);
    REQUIRE(desc.has_value());
    const auto p = load(m, "context: { length: 64, parallel: 2, kv_type: f32 }\n");
    const auto c = engine::context_memory(p, *desc);
    CHECK(c.kv == static_cast<uint64_t>(full * 2 * kv_heads * head * 4 * 64 * 2));
    CHECK(c.recurrent == static_cast<uint64_t>(linear * state_floats * 4 * 2));
  }
}

TEST_CASE("preflight: weights count against memory only when not memory-mapped", "[preflight]") {
  const fs::path& m = demo("demo-llama");
  uint64_t tensor_bytes = 0;
  {
    auto src = model::open_source(build_registry(), m);
    REQUIRE(src.has_value());
    for (const auto& t : src->source->tensors()) tensor_bytes += t.bytes;
  }
  auto desc = planner::describe_file(build_registry(), m);
  REQUIRE(desc.has_value());
  CHECK(engine::context_memory(load(m, ""), *desc).weights == 0);
  CHECK(engine::context_memory(load(m, "", {"model.mmap=false"}), *desc).weights == tensor_bytes);
}

TEST_CASE("preflight: a context whose memory exceeds what is available is refused at context.length", "[preflight]") {
  const fs::path& m = demo("demo-llama");
  const int64_t layers = header_int(m, "llama.block_count"), kv_heads = header_int(m, "llama.attention.head_count_kv");
  const int64_t head = header_head(m, "llama");
  const auto per_position = std::to_string(layers * 2 * kv_heads * head * 2);
  const uint64_t available = kGiB;
  const auto p = load(m, "context:\n  length: 1000000000\n");
  const auto d = check(p, available);
  // The trained-length warning comes with it; the error is the memory plan.
  REQUIRE(d.size() == 2);
  CHECK_FALSE(d[0].warning);
  CHECK(at(d[0].loc) == "4:11");
  const std::string& msg = d[0].message;
  INFO(msg);
  CHECK(msg.rfind("context.length 1000000000 needs ", 0) == 0);
  CHECK(msg.find("but 1.00 GiB is available") != std::string::npos);
  CHECK(msg.find("KV cache 1.86 TiB (f16, " + per_position + " bytes per position x 1000000000 positions x 1 sequence)") !=
        std::string::npos);
  CHECK(msg.find("compute arena ") != std::string::npos);
  CHECK(msg.find("weights memory-mapped (not counted)") != std::string::npos);
  // The longest context named fits, and one block more does not.
  auto desc = planner::describe_file(build_registry(), m);
  REQUIRE(desc.has_value());
  const int64_t longest = engine::longest_fitting_context(p, *desc, available);
  REQUIRE(longest > 0);
  CHECK(longest % 32 == 0);
  CHECK(msg.find("the longest context that fits is " + std::to_string(longest) + ";") != std::string::npos);
  CHECK(check(load(m, "", {"context.length=" + std::to_string(longest)}), available).size() == 1);  // the warning only
  const auto over = check(load(m, "", {"context.length=" + std::to_string(longest + 32)}), available);
  REQUIRE(over.size() == 2);
  CHECK_FALSE(over[0].warning);
}

TEST_CASE("preflight: more KV positions than int32 cells can address are refused before the memory plan", "[preflight]") {
  const fs::path& m = demo("demo-llama");
  const auto p = load(m, "context: { length: 2147483647, parallel: 2 }\n");
  const auto d = check(p, 0);  // memory unknown: only the address limit applies
  REQUIRE(d.size() == 2);
  // 2^31 - 1 rounds up to 2^26 blocks of 32 = 2^31 per sequence, twice.
  CHECK(d[0].message == "context.length 2147483647 x context.parallel 2 is 4294967296 KV cache positions, more than the "
                        "2147483648 the engine can address; lower context.length or context.parallel");
  CHECK(at(d[0].loc) == "3:20");
}

TEST_CASE("preflight: a context longer than the trained length warns once with both numbers", "[preflight]") {
  const fs::path& m = demo("demo-llama");
  const auto trained = header_int(m, "llama.context_length");
  const auto longer = std::to_string(2 * trained);
  const auto p = load(m, "context: { length: " + longer + " }\n");
  const auto d = check(p, 64 * kGiB);
  REQUIRE(d.size() == 1);
  CHECK(d[0].warning);
  CHECK(d[0].message == "context.length " + longer + " is longer than the " + std::to_string(trained) +
                            " positions the model was trained on (llama.context_length); output past position " +
                            std::to_string(trained) + " may degrade");
  CHECK(check(load(m, "context: { length: " + std::to_string(trained) + " }\n"), 64 * kGiB).empty());
}

TEST_CASE("preflight: a quantized KV type whose blocks do not divide the head size is an error at kv_type", "[preflight]") {
  // q8_0 stores 32 values per block; a head of 48 values cannot be split into them.
  auto t = synth::builtin_topology("demo-llama");
  REQUIRE(t.has_value());
  t->n_embd = 192, t->n_head = 4, t->n_head_kv = 2, t->head_dim = 48, t->n_rot = 48;
  test::TempDir dir;
  synth::SynthOptions o;
  o.tokenizer = false;
  REQUIRE(synth::write_synth_model(dir / "h48.gguf", *t, o).is_ok());
  const auto d = check(load(dir / "h48.gguf", "context: { kv_type: q8_0 }\n"), 64 * kGiB);
  REQUIRE(d.size() == 1);
  CHECK(d[0].message == "context.kv_type q8_0 stores heads in blocks of 32 values, but this model's head size is 48; use "
                        "kv_type f16 for it");
  CHECK(at(d[0].loc) == "3:21");
}
