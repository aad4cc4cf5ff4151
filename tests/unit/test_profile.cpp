// The per-op profile (`bench --profile`): node counts equal what the devices actually ran,
// profiling leaves the logits bit for bit unchanged, and the weight bytes per op follow the
// GGUF's tensor sizes.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>

#include "bench/profile.hpp"
#include "engine_support.hpp"
#include "graph/profile.hpp"
#include "mapped_file.hpp"
#include "parse.hpp"
#include "support.hpp"
#include "synth/synth.hpp"

using namespace sy;
namespace fs = std::filesystem;

namespace {

fs::path demo_model(const test::TempDir& dir) {
  const fs::path p = dir / "demo.gguf";
  if (!fs::exists(p)) REQUIRE(synth::write_demo_model(p).is_ok());
  return p;
}

// The CPU device, counting the nodes it is handed by op: an account of what ran that does
// not go through the profile.
class CountingDevice final : public Device {
 public:
  explicit CountingDevice(Device& inner) : inner_(inner) {}
  DeviceInfo info() const noexcept override { return inner_.info(); }
  Result<std::unique_ptr<Buffer>> allocate(size_t n, BufferKind k) noexcept override { return inner_.allocate(n, k); }
  Support supports(const GraphNode& n, std::span<const GraphTensor> t) const noexcept override {
    return inner_.supports(n, t);
  }
  Status execute(const SubGraph& g) noexcept override {
    for (const auto& n : g.nodes) ++ran[std::string(op_name(n.op))];
    largest_subgraph = std::max(largest_subgraph, g.nodes.size());
    return inner_.execute(g);
  }
  Status copy_to_device(Buffer& dst, size_t off, std::span<const std::byte> src) noexcept override {
    return inner_.copy_to_device(dst, off, src);
  }
  Status copy_to_host(Buffer& src, size_t off, std::span<std::byte> dst) noexcept override {
    return inner_.copy_to_host(src, off, dst);
  }
  Status synchronize() noexcept override { return inner_.synchronize(); }
  void reset() {
    ran.clear();
    largest_subgraph = 0;
  }

  std::map<std::string, int64_t> ran;
  size_t largest_subgraph = 0;

 private:
  Device& inner_;
};

std::vector<engine::BatchToken> prompt(int32_t seq, int n) {
  std::vector<engine::BatchToken> b;
  for (int i = 0; i < n; ++i) b.push_back({seq, (i * 37 + 5) % 500 + 1, i + 1 == n});
  return b;
}

void check_counts(const graph::OpProfile& p, const std::map<std::string, int64_t>& ran) {
  int64_t total = 0;
  for (const auto& [op, n] : ran) {
    INFO(op);
    CHECK(p.nodes_of(op) == n);
    total += n;
  }
  CHECK(p.total_nodes() == total);
  for (const auto& e : p.entries()) {
    CHECK(e.ns >= 0);
    CHECK(e.device == 0);
  }
}

// The demo file's tensors by name.
std::map<std::string, TensorDesc> gguf_tensors(const fs::path& p) {
  auto mf = gguf::MappedFile::open(p);
  REQUIRE(mf);
  auto f = gguf::parse((*mf)->bytes(), p.string());
  REQUIRE(f);
  std::map<std::string, TensorDesc> out;
  for (const auto& t : f->tensors) out[t.desc.name] = t.desc;
  return out;
}

GraphTensor tensor_of(const TensorDesc& d) {
  GraphTensor t;
  t.type = d.type;
  for (size_t i = 0; i < d.shape.size(); ++i) t.ne[i] = d.shape[i];
  graph::set_contiguous_strides(t);
  return t;
}

}  // namespace

TEST_CASE("profile: node counts per op equal what the device ran, one node per sub-graph", "[profile][engine]") {
  test::TempDir dir;
  auto rt = test::bring_up_model(demo_model(dir));
  CountingDevice counter(*rt->devices[0]);
  engine::EngineConfig cfg;
  cfg.kv.type = StorageType::F32;
  cfg.kv.n_ctx = 64;
  auto eng = engine::Engine::create(*rt->model, {&counter}, cfg);
  REQUIRE(eng);
  REQUIRE((*eng)->kv().add(0).is_ok());
  std::vector<float> logits;

  // Unprofiled, the device gets whole runs of nodes.
  counter.reset();
  REQUIRE((*eng)->decode(prompt(0, 9), logits).is_ok());
  CHECK(counter.largest_subgraph > 1);

  graph::OpProfile prefill, decode;
  (*eng)->set_profile(&prefill);
  counter.reset();
  REQUIRE((*eng)->decode(prompt(0, 7), logits).is_ok());
  check_counts(prefill, counter.ran);
  CHECK(counter.largest_subgraph == 1);
  CHECK(prefill.nodes_of("matmul") > 0);
  CHECK(prefill.nodes_of("matmul_id") > 0);

  (*eng)->set_profile(&decode);
  counter.reset();
  const engine::BatchToken one{0, 42, true};
  REQUIRE((*eng)->decode({&one, 1}, logits).is_ok());
  check_counts(decode, counter.ran);

  // Off again: whole runs, and the profiles no longer change.
  (*eng)->set_profile(nullptr);
  counter.reset();
  const int64_t before = decode.total_nodes();
  REQUIRE((*eng)->decode({&one, 1}, logits).is_ok());
  CHECK(counter.largest_subgraph > 1);
  CHECK(decode.total_nodes() == before);
}

TEST_CASE("profile: a profiled step's logits equal an unprofiled one's bit for bit", "[profile][engine]") {
  test::TempDir dir;
  auto rt = test::bring_up_model(demo_model(dir));
  auto& eng = *rt->engine;
  const std::vector<int32_t> ids{1, 300, 17, 250, 99, 4, 411, 8};
  const std::vector<int32_t> forced{5, 6, 7};
  const auto plain = test::teacher_forced(eng, 0, ids, forced);
  REQUIRE(eng.kv().remove(0).is_ok());
  graph::OpProfile p;
  eng.set_profile(&p);
  const auto profiled = test::teacher_forced(eng, 0, ids, forced);
  eng.set_profile(nullptr);
  REQUIRE(plain.size() == profiled.size());
  for (size_t s = 0; s < plain.size(); ++s) {
    INFO("step " << s);
    REQUIRE(plain[s].size() == profiled[s].size());
    CHECK(std::memcmp(plain[s].data(), profiled[s].data(), plain[s].size() * sizeof(float)) == 0);
  }
}

TEST_CASE("profile: weight bytes are the GGUF's tensor sizes", "[profile]") {
  test::TempDir dir;
  const fs::path model = demo_model(dir);
  const auto t = gguf_tensors(model);
  REQUIRE(t.count("blk.0.ffn_up_exps.weight") == 1);
  REQUIRE(t.count("token_embd.weight") == 1);

  SECTION("matmul reads its whole matrix") {
    const TensorDesc& d = t.at("blk.0.attn_qkv.weight");
    // Five tokens: output [rows, 5].
    GraphTensor y;
    y.ne[0] = d.shape[1];
    y.ne[1] = 5;
    graph::set_contiguous_strides(y);
    std::vector<GraphTensor> ts{tensor_of(d), GraphTensor{}, y};
    GraphNode n;
    n.op = OpKind::matmul;
    n.src[0] = 0;
    n.src[1] = 1;
    n.dst = 2;
    CHECK(graph::weight_bytes_read(n, ts) == d.bytes);
    CHECK(graph::deciding_type(n, ts) == d.type);
    // One multiply-add per weight per token, counted as two operations.
    CHECK(graph::matmul_flops(n, ts) == 2 * d.elements() * 5);
  }
  SECTION("matmul_id reads each chosen expert once") {
    const TensorDesc& d = t.at("blk.0.ffn_up_exps.weight");
    REQUIRE(d.shape.size() == 3);
    const auto n_expert = static_cast<uint64_t>(d.shape[2]);
    // Two used per token, three tokens; experts {0, 1} chosen, 1 twice.
    std::vector<int32_t> chosen{1, 0, 0, 1, 1, 0};
    GraphTensor ids;
    ids.type = StorageType::I32;
    ids.ne[0] = 2;
    ids.ne[1] = 3;
    graph::set_contiguous_strides(ids);
    ids.data = chosen.data();
    GraphTensor y;  // [rows, used, tokens]
    y.ne[0] = d.shape[1];
    y.ne[1] = 2;
    y.ne[2] = 3;
    graph::set_contiguous_strides(y);
    std::vector<GraphTensor> ts{tensor_of(d), GraphTensor{}, ids, y};
    GraphNode n;
    n.op = OpKind::matmul_id;
    n.src[0] = 0;
    n.src[1] = 1;
    n.src[2] = 2;
    n.dst = 3;
    CHECK(graph::weight_bytes_read(n, ts) == std::min<uint64_t>(2, n_expert) * (d.bytes / n_expert));
    // Six (token, expert) pairs, each one expert's matrix.
    CHECK(graph::matmul_flops(n, ts) == 2 * (d.elements() / n_expert) * 6);
    ts[2].data = nullptr;  // ids the host cannot read: every expert counts
    CHECK(graph::weight_bytes_read(n, ts) == d.bytes);
  }
  SECTION("a decode step's lookup reads one embedding row, its experts n_used of n_expert") {
    auto rt = test::bring_up_model(model);
    auto& eng = *rt->engine;
    const auto& hp = rt->model->hparams();
    REQUIRE(eng.kv().add(0).is_ok());
    std::vector<float> logits;
    REQUIRE(eng.decode(prompt(0, 5), logits).is_ok());
    graph::OpProfile p;
    eng.set_profile(&p);
    const engine::BatchToken one{0, 42, true};
    REQUIRE(eng.decode({&one, 1}, logits).is_ok());
    eng.set_profile(nullptr);
    const TensorDesc& emb = t.at("token_embd.weight");
    uint64_t lookup = 0, experts = 0;
    for (const auto& e : p.entries()) {
      if (e.op == "get_rows") lookup += e.weight_bytes;
      if (e.op == "matmul_id") experts += e.weight_bytes;
    }
    CHECK(lookup == emb.bytes / static_cast<uint64_t>(emb.shape[1]));
    // One token picks n_used distinct experts of every expert tensor.
    uint64_t all_experts = 0;
    for (const auto& [name, d] : t)
      if (name.ends_with("_exps.weight")) all_experts += d.bytes / static_cast<uint64_t>(hp.n_expert);
    CHECK(experts == all_experts * static_cast<uint64_t>(hp.n_expert_used));
  }
}

TEST_CASE("profile: bench::profile_steps reports both steps and leaves the cache empty", "[profile][engine]") {
  test::TempDir dir;
  auto rt = test::bring_up_model(demo_model(dir));
  auto& eng = *rt->engine;
  const int64_t free_blocks = eng.kv().free_blocks();
  auto p = bench::profile_steps(eng, 10);
  REQUIRE(p);
  CHECK(p->prefill_tokens == 10);
  CHECK(eng.kv().free_blocks() == free_blocks);
  CHECK(eng.kv().length(0) < 0);
  CHECK(p->prefill.nodes_of("matmul") > 0);
  CHECK(p->decode.nodes_of("matmul") == p->prefill.nodes_of("matmul"));  // one graph per step, same layers
  CHECK(p->prefill_ms >= 0);
  CHECK(p->decode_plain_ms >= 0);
  const std::string md = bench::profile_markdown(*p);
  CHECK_THAT(md, Catch::Contains("| op | type | device | nodes | ms | % of step | GB/s | GFLOP/s |"));
  CHECK_THAT(md, Catch::Contains("Prefill of 10 tokens"));
  CHECK_THAT(md, Catch::Contains("| matmul_id |"));
  const auto j = bench::profile_json(*p);
  CHECK(j["prefill"]["tokens"] == 10);
  CHECK(j["decode"]["rows"].size() == p->decode.entries().size());

  auto too_long = bench::profile_steps(eng, 100000);
  REQUIRE_FALSE(too_long);
  CHECK_THAT(too_long.status().message(), Catch::Contains("use a shorter -p or a longer context"));
}
