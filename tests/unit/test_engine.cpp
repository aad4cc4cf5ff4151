// The engine's parts on the project's own demo model (no shared data needed): arena
// planning, the paged KV cache (fork, remove, limits), scheduler fallbacks and `strict`,
// chunked prefill, load-time errors.
#include <catch2/catch.hpp>

#include <cstring>

#include "engine_support.hpp"
#include "graph/arena.hpp"
#include "graph/scheduler.hpp"
#include "support.hpp"
#include "synth/synth.hpp"
#include "writer.hpp"

using namespace sy;
namespace fs = std::filesystem;

namespace {

fs::path demo_model(const test::TempDir& dir, const std::string& arch = "qwen35moe") {
  const fs::path p = dir / (arch + ".gguf");
  if (!fs::exists(p)) REQUIRE(synth::write_demo_model(p, arch == "llama" ? "demo-llama" : "demo").is_ok());
  return p;
}

std::vector<int32_t> prompt_of(size_t n) {
  std::vector<int32_t> p{1};
  for (size_t i = 1; i < n; ++i) p.push_back(static_cast<int32_t>((i * 97 + 13) % 511 + 1));
  return p;
}

}  // namespace

TEST_CASE("arena planner reuses released blocks and never overlaps live ones", "[engine]") {
  graph::ArenaPlanner a;
  const size_t x = a.alloc(100), y = a.alloc(200), z = a.alloc(64);
  CHECK(x == 0);
  CHECK(y == 128);   // 100 rounded up to 64-byte alignment
  CHECK(z == 128 + 256);
  CHECK(a.peak() == 128 + 256 + 64);
  a.release(y, 200);
  CHECK(a.alloc(50) == 128);     // best fit inside the freed block
  CHECK(a.alloc(150) == 192);    // the rest of it
  a.release(z, 64);              // top block: shrinks the top
  CHECK(a.alloc(64) == 128 + 256);
  CHECK(a.peak() == 128 + 256 + 64);
}

TEST_CASE("paged KV cache: blocks, fork, remove and limits", "[engine]") {
  test::TempDir dir;
  auto rt = test::bring_up_model(demo_model(dir), {"f16", 100, 2, 512});
  auto& kv = rt->engine->kv();
  const int64_t free0 = kv.free_blocks();
  CHECK(free0 == 2 * 4);  // ceil(100 / 32) blocks for each of 2 sequences
  REQUIRE(kv.add(7).is_ok());
  CHECK(kv.add(7).code() == StatusCode::invalid_argument);
  std::vector<int32_t> cells(40);
  REQUIRE(kv.extend(7, 40, cells.data()).is_ok());
  CHECK(kv.free_blocks() == free0 - 2);
  // Cells follow the block table: consecutive within a block.
  for (int i = 1; i < 32; ++i) CHECK(cells[static_cast<size_t>(i)] == cells[0] + i);
  // Fork shares the full block and copies the partial one.
  REQUIRE(kv.fork(7, 8).is_ok());
  CHECK(kv.length(8) == 40);
  CHECK(kv.free_blocks() == free0 - 3);
  CHECK(kv.add(9).code() == StatusCode::exhausted);  // two sequence slots only
  // Beyond the context length: a clear error and nothing changes.
  const auto st = kv.extend(8, 61, cells.data());
  CHECK(st.code() == StatusCode::out_of_range);
  CHECK_THAT(st.message(), Catch::Contains("context length is 100"));
  CHECK(kv.length(8) == 40);
  REQUIRE(kv.remove(7).is_ok());
  CHECK(kv.free_blocks() == free0 - 2);  // the shared block stays with sequence 8
  REQUIRE(kv.remove(8).is_ok());
  CHECK(kv.free_blocks() == free0);
  CHECK(kv.remove(8).code() == StatusCode::not_found);
}

TEST_CASE("engine: a forked sequence continues exactly like a fresh one", "[engine]") {
  test::TempDir dir;
  for (const char* arch : {"qwen35moe", "llama"}) {
    DYNAMIC_SECTION(arch) {
      auto rt = test::bring_up_model(demo_model(dir, arch), {"f16", 256, 3, 512});
      auto& e = *rt->engine;
      const auto prompt = prompt_of(45);  // a partial last block
      const auto fresh = test::greedy(e, 0, prompt, 12);
      // Sequence 1: the prompt without its last token, forked into 2; both then finish it.
      std::vector<int32_t> head(prompt.begin(), prompt.end() - 1);
      std::vector<float> l;
      std::vector<engine::BatchToken> batch;
      REQUIRE(e.kv().add(1).is_ok());
      for (int32_t t : head) batch.push_back({1, t, false});
      REQUIRE(e.decode(batch, l).is_ok());
      REQUIRE(e.kv().fork(1, 2).is_ok());
      const auto a = test::greedy(e, 1, {prompt.back()}, 12);
      const auto b = test::greedy(e, 2, {prompt.back()}, 12);
      CHECK(a == fresh);
      CHECK(b == fresh);
    }
  }
}

TEST_CASE("engine: prefill in small ubatches equals one batch", "[engine]") {
  test::TempDir dir;
  const auto prompt = prompt_of(70);
  auto one = test::bring_up_model(demo_model(dir), {"f32", 256, 1, 512});
  auto chunked = test::bring_up_model(demo_model(dir), {"f32", 256, 1, 16});
  const auto a = test::teacher_forced(*one->engine, 0, prompt, {5, 6, 7});
  const auto b = test::teacher_forced(*chunked->engine, 0, prompt, {5, 6, 7});
  REQUIRE(a.size() == b.size());
  for (size_t s = 0; s < a.size(); ++s)
    for (size_t i = 0; i < a[s].size(); ++i) CHECK(std::abs(a[s][i] - b[s][i]) <= 1e-4f);
}

TEST_CASE("engine: logits only for the positions asked for, in batch order", "[engine]") {
  test::TempDir dir;
  auto rt = test::bring_up_model(demo_model(dir), {"f32", 256, 1, 512});
  auto& e = *rt->engine;
  const auto prompt = prompt_of(10);
  REQUIRE(e.kv().add(0).is_ok());
  std::vector<engine::BatchToken> batch;
  for (size_t i = 0; i < prompt.size(); ++i) batch.push_back({0, prompt[i], i == 3 || i == 9});
  std::vector<float> l;
  REQUIRE(e.decode(batch, l).is_ok());
  REQUIRE(l.size() == 2 * static_cast<size_t>(e.n_vocab()));
  // Position 3's logits equal a run over the first four tokens alone.
  auto ref = test::bring_up_model(demo_model(dir), {"f32", 256, 1, 512});
  const auto r = test::teacher_forced(*ref->engine, 0, std::vector<int32_t>(prompt.begin(), prompt.begin() + 4), {});
  for (int64_t i = 0; i < e.n_vocab(); ++i) CHECK(std::abs(l[static_cast<size_t>(i)] - r[0][static_cast<size_t>(i)]) <= 1e-4f);
  // Bad batches are refused with the reason.
  batch = {{0, 1, true}, {1, 2, true}};
  CHECK_THAT(e.decode(batch, l).message(), Catch::Contains("was not added"));
  batch = {{0, 100000, true}};
  CHECK_THAT(e.decode(batch, l).message(), Catch::Contains("outside the vocabulary"));
}

TEST_CASE("engine: an unknown architecture or a missing tensor is a load error naming it", "[engine]") {
  test::TempDir dir;
  auto write = [&](const std::string& arch, bool with_q) {
    gguf::Writer w;
    w.add("general.architecture", arch);
    w.add(arch + ".embedding_length", uint32_t{32});
    w.add(arch + ".block_count", uint32_t{1});
    w.add(arch + ".attention.head_count", uint32_t{2});
    w.add(arch + ".feed_forward_length", uint32_t{32});
    static std::vector<std::byte> data(32 * 32 * 4);
    auto add = [&](const std::string& n, std::vector<int64_t> shape) {
      TensorDesc d;
      d.name = n;
      d.shape = shape;
      d.type = StorageType::F32;
      d.bytes = 4;
      for (auto s : shape) d.bytes *= static_cast<uint64_t>(s);
      w.add_tensor(d, std::span<const std::byte>(data.data(), d.bytes));
    };
    add("token_embd.weight", {32, 32});
    add("output_norm.weight", {32});
    add("blk.0.attn_norm.weight", {32});
    add("blk.0.ffn_norm.weight", {32});
    if (with_q) add("blk.0.attn_q.weight", {32, 32});
    const fs::path p = dir / (arch + std::to_string(with_q) + ".gguf");
    REQUIRE(w.write(p).is_ok());
    return p;
  };
  CHECK_THROWS_WITH(test::bring_up_model(write("gptj", true)), Catch::Contains("architecture 'gptj' is not supported"));
  CHECK_THROWS_WITH(test::bring_up_model(write("llama", false)),
                    Catch::Contains("lacks tensor blk.0.attn_q.weight, which the llama architecture needs"));
}

namespace {

// A device that runs nothing: every node anchored to its memory falls back. Its memory is
// mapped for the host (unified), so the cpu reads its tensors in place.
class NullDevice final : public Device {
 public:
  DeviceInfo info() const noexcept override {
    DeviceInfo d;
    d.name = "null0";
    d.unified_memory = true;
    return d;
  }
  Result<std::unique_ptr<Buffer>> allocate(size_t, BufferKind) noexcept override { return error::unsupported("no memory"); }
  Support supports(const GraphNode&, std::span<const GraphTensor>) const noexcept override { return Support::no; }
  Status execute(const SubGraph&) noexcept override { return error::internal("never called"); }
};

}  // namespace

TEST_CASE("scheduler: fallbacks are counted once per kind and refused under strict", "[engine]") {
  static registry::Registry reg(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  auto cpu = reg.create_backend("cpu", {});
  REQUIRE(cpu.has_value());
  NullDevice null;
  std::vector<float> in(8, -1.0f), ones(8, 1.0f);
  GraphTensor w;
  w.ne[0] = 8;
  graph::set_contiguous_strides(w);
  w.data = ones.data();
  for (bool strict : {false, true}) {
    graph::Scheduler s({&null, &(*cpu)->device(0)}, strict);
    for (int step = 0; step < 2; ++step) {
      graph::Graph g;
      const auto x = g.input(StorageType::F32, in.data(), 8);
      // mul and add are anchored to null0's weight and fall back; silu and sigmoid follow
      // their producer (the cpu) and are no fallbacks.
      const auto wt = g.persistent(w, 0);
      const auto y = g.unary(OpKind::sigmoid, g.binary(OpKind::add, g.unary(OpKind::silu, g.binary(OpKind::mul, x, wt)), wt));
      g.mark_output(y);
      const auto st = s.run(g);
      if (strict) {
        CHECK_THAT(st.message(), Catch::Contains("`strict: true` forbids falling back to cpu"));
        break;
      }
      REQUIRE(st.is_ok());
      const float silu = -1.0f / (1.0f + std::exp(1.0f)) + 1.0f;
      CHECK(static_cast<const float*>(g.tensor_at(y).data)[3] == Approx(1.0f / (1.0f + std::exp(-silu))));
    }
    if (!strict) {
      CHECK(s.stats().fallback_nodes == 4);      // two nodes, two steps
      CHECK(s.stats().distinct_fallbacks == 2);  // mul and add, logged once each
    }
  }
}

namespace {

// Device memory the host cannot address: only upload/download reach it, as on a GPU.
class IslandBuffer final : public Buffer {
 public:
  explicit IslandBuffer(size_t n) : mem_(n) {}
  size_t size() const noexcept override { return mem_.size(); }
  Status upload(size_t off, std::span<const std::byte> src) noexcept override {
    if (off + src.size() > mem_.size()) return error::invalid_argument("out of range");
    std::memcpy(mem_.data() + off, src.data(), src.size());
    return Status::ok();
  }
  Status download(size_t off, std::span<std::byte> dst) const noexcept override {
    if (off + dst.size() > mem_.size()) return error::invalid_argument("out of range");
    std::memcpy(dst.data(), mem_.data() + off, dst.size());
    return Status::ok();
  }
  std::byte* at(size_t off) { return mem_.data() + off; }

 private:
  std::vector<std::byte> mem_;
};

// A device with its own memory that runs only `mul` of f32 vectors, reading and writing
// its buffers.
class IslandDevice final : public Device {
 public:
  DeviceInfo info() const noexcept override {
    DeviceInfo d;
    d.name = "island0";
    return d;
  }
  Result<std::unique_ptr<Buffer>> allocate(size_t n, BufferKind) noexcept override {
    return std::unique_ptr<Buffer>(std::make_unique<IslandBuffer>(n));
  }
  Support supports(const GraphNode& n, std::span<const GraphTensor> t) const noexcept override {
    return n.op == OpKind::mul && t[static_cast<size_t>(n.src[0])].type == StorageType::F32 ? Support::yes : Support::no;
  }
  Status execute(const SubGraph& g) noexcept override {
    for (const auto& n : g.nodes) {
      const auto& x = g.tensors[static_cast<size_t>(n.src[0])];
      const auto& w = g.tensors[static_cast<size_t>(n.src[1])];
      const auto& y = g.tensors[static_cast<size_t>(n.dst)];
      auto* xb = dynamic_cast<IslandBuffer*>(x.buffer);
      auto* wb = dynamic_cast<IslandBuffer*>(w.buffer);
      auto* yb = dynamic_cast<IslandBuffer*>(y.buffer);
      if (!xb || !wb || !yb || x.data || y.data) return error::internal("island: a tensor outside island memory");
      const auto* in = reinterpret_cast<const float*>(xb->at(x.offset));
      const auto* wv = reinterpret_cast<const float*>(wb->at(w.offset));
      auto* out = reinterpret_cast<float*>(yb->at(y.offset));
      for (int64_t i = 0; i < x.elements(); ++i) out[i] = in[i] * wv[i];
    }
    ++subgraphs;
    return Status::ok();
  }
  int subgraphs = 0;
};

}  // namespace

TEST_CASE("scheduler: copies between device memories where a node's device cannot read its input", "[engine]") {
  static registry::Registry reg(std::vector<registry::SearchDir>{{SY_BUILD_PLUGIN_DIR, "build"}});
  auto cpu = reg.create_backend("cpu", {});
  REQUIRE(cpu.has_value());
  IslandDevice island;
  graph::Scheduler s({&island, &(*cpu)->device(0)}, false);
  std::vector<float> in{-2, -1, 0, 1, 2, 3, 4, 5};
  // A weight of 3s in island memory.
  auto wbuf = island.allocate(8 * sizeof(float), BufferKind::device_local);
  REQUIRE(wbuf.has_value());
  const std::vector<float> threes(8, 3.0f);
  REQUIRE((*wbuf)->upload(0, std::as_bytes(std::span(threes))).is_ok());
  GraphTensor w;
  w.ne[0] = 8;
  graph::set_contiguous_strides(w);
  w.buffer = wbuf->get();
  for (int step = 0; step < 2; ++step) {
    graph::Graph g;
    const auto x = g.input(StorageType::F32, in.data(), 8);
    // silu: cpu (its input is host memory); mul: island, where its weight is (the input
    // is copied there); sigmoid follows its producer to the island, which refuses it: it
    // falls back to the cpu, and the view of half the product is copied back.
    const auto a = g.unary(OpKind::silu, x);
    const auto b = g.binary(OpKind::mul, a, g.persistent(w, 0));
    const auto c = g.unary(OpKind::sigmoid, g.view(b, {4}, {16}, 16));
    g.mark_output(c);
    REQUIRE(s.run(g).is_ok());
    const auto* out = static_cast<const float*>(g.tensor_at(c).data);
    REQUIRE(out != nullptr);
    for (int i = 0; i < 4; ++i) {
      const double v = in[static_cast<size_t>(i + 4)];
      CHECK(out[i] == Approx(1.0 / (1.0 + std::exp(-3.0 * v / (1.0 + std::exp(-v))))).epsilon(1e-5));
    }
  }
  CHECK(island.subgraphs == 2);
  CHECK(s.stats().fallback_nodes == 2);  // sigmoid, each step
  CHECK(s.stats().transfers == 4);  // to the island and back, each step
  CHECK(s.stats().transfer_bytes == 4 * 8 * sizeof(float));
}
