// Thread pool and matmul: threaded, tiled, SIMD results against the single-threaded scalar
// reference, for GEMV (m = 1) and GEMM shapes with odd sizes; matmul_id and the fused
// gate/up products, alone and through the executor's peephole.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <thread>

#include "matmul.hpp"
#include "kernel_sets.hpp"
#include "matmul_close.hpp"
#include "switchyard/quant.hpp"

using namespace sy;
using namespace sy::cpu;

TEST_CASE("thread pool: every task runs exactly once, on a valid thread, run after run", "[cpu]") {
  ThreadPool pool(4);
  REQUIRE(pool.size() == 4);
  for (int round = 0; round < 50; ++round) {
    const int64_t n = 1 + round * 37;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<bool> bad_thread{false};
    pool.run(n, [&](int64_t t, int th) {
      hits[static_cast<size_t>(t)].fetch_add(1);
      if (th < 0 || th >= 4) bad_thread = true;
    });
    for (auto& h : hits) REQUIRE(h.load() == 1);
    REQUIRE_FALSE(bad_thread.load());
  }
  ThreadPool single(1);
  int count = 0;
  single.run(10, [&](int64_t, int) { ++count; });
  CHECK(count == 10);
}

TEMPLATE_TEST_CASE("matmul with every ISA and thread count equals the scalar reference", "[cpu]", SY_ISA_SETS) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  const StorageType types[] = {StorageType::F32, StorageType::F16, StorageType::BF16, StorageType::Q8_0,
                               StorageType::Q4_0, StorageType::Q4_1, StorageType::Q5_0, StorageType::Q5_1,
                               StorageType::IQ4_NL, StorageType::Q2_K, StorageType::Q3_K, StorageType::Q4_K,
                               StorageType::Q5_K, StorageType::Q6_K, StorageType::IQ4_XS};
  ThreadPool pool(3);
  std::mt19937 rng(42);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto t : types) {
    const int64_t bs = storage_type_info(t).block_size;
    const int64_t k = bs == 1 ? 77 : (bs == 256 ? 512 : 160);
    const int64_t rows = 37;
    std::vector<float> wf(static_cast<size_t>(rows * k));
    for (auto& v : wf) v = nd(rng);
    std::vector<uint8_t> w(*storage_row_bytes(t, static_cast<uint64_t>(k)) * rows);
    const size_t row_bytes = *storage_row_bytes(t, static_cast<uint64_t>(k));
    for (int64_t r = 0; r < rows; ++r) REQUIRE(quantize_row(t, wf.data() + r * k, w.data() + r * row_bytes, k).is_ok());
    for (int64_t m : {1, 5, 40}) {
      std::vector<float> x(static_cast<size_t>(m * k));
      for (auto& v : x) v = nd(rng);
      std::vector<float> ref(static_cast<size_t>(m * rows)), got(ref.size());
      MatmulArgs a{w.data(), t, k, rows, x.data(), m, ref.data()};
      REQUIRE(matmul_reference(a).is_ok());
      INFO(storage_type_name(t) << " m=" << m << " isa=" << isa_name(isa));
      std::vector<uint8_t> scratch(matmul_scratch_bytes(t, k, m, isa));
      a.y = got.data();
      REQUIRE(matmul(a, isa, pool, scratch.data()).is_ok());
      double max_err = 0, max_mag = 0;
      for (size_t i = 0; i < ref.size(); ++i) {
        max_err = std::max(max_err, static_cast<double>(std::fabs(got[i] - ref[i])));
        max_mag = std::max(max_mag, static_cast<double>(std::fabs(ref[i])));
      }
      CHECK(max_err <= 1e-4 * std::max(1.0, max_mag));
    }
  }
}

TEST_CASE("matmul refuses a type without kernels and a ragged row", "[cpu]") {
  ThreadPool pool(1);
  float x[32] = {}, y[1];
  uint8_t w[64] = {};
  MatmulArgs a{w, StorageType::TQ1_0, 256, 1, x, 1, y};
  CHECK(matmul(a, Isa::scalar, pool, nullptr).message() == "cpu: no matmul kernel for weights of type TQ1_0");
  a.w_type = StorageType::Q8_0;
  a.k = 33;
  CHECK(matmul_reference(a).message() == "cpu: matmul row length 33 is not a multiple of Q8_0's block size");
}

#include "matmul_id.hpp"

TEST_CASE("matmul_id: expert-grouped results equal one reference matmul per pair", "[cpu]") {
  const int64_t k = 256, rows = 19, n_experts = 6, n_used = 2, n_tokens = 9;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(n_experts) - 1);
  for (auto t : {StorageType::Q4_K, StorageType::Q8_0, StorageType::F16}) {
    const size_t rb = *storage_row_bytes(t, k);
    std::vector<float> wf(static_cast<size_t>(k * rows * n_experts));
    for (auto& v : wf) v = nd(rng);
    std::vector<uint8_t> w(rb * static_cast<size_t>(rows * n_experts));
    for (int64_t r = 0; r < rows * n_experts; ++r) REQUIRE(quantize_row(t, wf.data() + r * k, w.data() + r * rb, k).is_ok());
    std::vector<int32_t> ids(static_cast<size_t>(n_used * n_tokens));
    for (auto& id : ids) id = pick(rng);
    ids[0] = ids[1] = 3;  // one token picking the same expert twice still works
    for (int64_t slots : {int64_t{1}, n_used}) {
      std::vector<float> x(static_cast<size_t>(k * slots * n_tokens));
      for (auto& v : x) v = nd(rng);
      std::vector<float> ref(static_cast<size_t>(rows * n_used * n_tokens)), got(ref.size());
      MatmulIdArgs a{w.data(), t, k, rows, n_experts, x.data(), slots, ids, n_used, n_tokens, ref.data()};
      REQUIRE(matmul_id_reference(a).is_ok());
      ThreadPool pool(2);
      a.y = got.data();
      REQUIRE(matmul_id(a, detect_isa(), pool).is_ok());
      for (size_t i = 0; i < ref.size(); ++i) REQUIRE(got[i] == Approx(ref[i]).margin(1e-4).epsilon(1e-4));
    }
    ids[5] = 6;
    MatmulIdArgs bad{w.data(), t, k, rows, n_experts, nullptr, 1, ids, n_used, n_tokens, nullptr};
    ThreadPool pool(1);
    CHECK(matmul_id(bad, Isa::scalar, pool).message() ==
          "cpu: matmul_id: token 2 slot 1 routes to expert 6, but there are 6");
  }
}

namespace {

std::vector<uint8_t> random_matrix(StorageType t, int64_t k, int64_t rows, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  const size_t rb = *storage_row_bytes(t, static_cast<uint64_t>(k));
  std::vector<float> wf(static_cast<size_t>(k));
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : wf) v = nd(rng);
    REQUIRE(quantize_row(t, wf.data(), w.data() + static_cast<size_t>(r) * rb, k).is_ok());
  }
  return w;
}

// SwiGLU written out here from its definition, silu(g) * u = g / (1 + e^-g) * u.
void glu_formula(const float* g, const float* u, float* h, int64_t n) {
  for (int64_t i = 0; i < n; ++i) h[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

// Routing with repeats: each token picks n_used experts from a small pool of "popular"
// ones (so several tokens share experts, as in prefill) and the first token picks one
// expert twice.
std::vector<int32_t> routing(int64_t n_experts, int64_t n_used, int64_t n_tokens, std::mt19937& rng) {
  std::uniform_int_distribution<int> pick(0, static_cast<int>(n_experts) - 1);
  std::uniform_int_distribution<int> popular(0, 5);
  std::vector<int32_t> ids(static_cast<size_t>(n_used * n_tokens));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = i % 2 == 0 ? pick(rng) : popular(rng);
  if (n_used > 1) ids[1] = ids[0];
  return ids;
}

}  // namespace

TEMPLATE_TEST_CASE("matmul_id on every ISA: many experts, shared and per-slot inputs, 1 and 37 tokens", "[cpu]", SY_ISA_SETS) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  const int64_t k = 512, rows = 40, n_experts = 64, n_used = 8;
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 1.f);
  ThreadPool pool(3);
  MatmulIdScratch scratch;  // reused across calls of different shapes, as the executor does
  for (auto t : {StorageType::Q4_K, StorageType::Q6_K, StorageType::Q8_0, StorageType::IQ4_XS, StorageType::F16}) {
    const auto w = random_matrix(t, k, rows * n_experts, rng);
    for (int64_t n_tokens : {int64_t{1}, int64_t{37}}) {
      const auto ids = routing(n_experts, n_used, n_tokens, rng);
      for (int64_t slots : {int64_t{1}, n_used}) {
        std::vector<float> x(static_cast<size_t>(k * slots * n_tokens));
        for (auto& v : x) v = nd(rng);
        std::vector<float> ref(static_cast<size_t>(rows * n_used * n_tokens)), got(ref.size());
        MatmulIdArgs a{w.data(), t, k, rows, n_experts, x.data(), slots, ids, n_used, n_tokens, ref.data()};
        REQUIRE(matmul_id_reference(a).is_ok());
        INFO(storage_type_name(t) << " tokens=" << n_tokens << " slots=" << slots << " isa=" << isa_name(isa));
        std::fill(got.begin(), got.end(), std::nanf(""));
        a.y = got.data();
        REQUIRE(matmul_id(a, isa, pool, scratch).is_ok());
        check_close(got, ref);
      }
    }
  }
}

TEMPLATE_TEST_CASE("matmul_id_gate_up equals two matmul_ids bit for bit, and its SwiGLU the formula", "[cpu]", SY_ISA_SETS) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  const int64_t k = 256, rows = 48, n_experts = 16, n_used = 4;
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0.f, 1.f);
  ThreadPool pool(3);
  MatmulIdScratch scratch;
  const auto wg = random_matrix(StorageType::Q4_K, k, rows * n_experts, rng);
  const auto wu = random_matrix(StorageType::Q5_K, k, rows * n_experts, rng);
  for (int64_t n_tokens : {int64_t{1}, int64_t{37}}) {
    const auto ids = routing(n_experts, n_used, n_tokens, rng);
    std::vector<float> x(static_cast<size_t>(k * n_tokens));
    for (auto& v : x) v = nd(rng);
    const size_t n_out = static_cast<size_t>(rows * n_used * n_tokens);
    std::vector<float> ref_g(n_out), ref_u(n_out), g(n_out), u(n_out), fg(n_out), fu(n_out), h(n_out), want_h(n_out);
    MatmulIdArgs gate{wg.data(), StorageType::Q4_K, k, rows, n_experts, x.data(), 1, ids, n_used, n_tokens, ref_g.data()};
    MatmulIdArgs up{wu.data(), StorageType::Q5_K, k, rows, n_experts, x.data(), 1, ids, n_used, n_tokens, ref_u.data()};
    REQUIRE(matmul_id_reference(gate).is_ok());
    REQUIRE(matmul_id_reference(up).is_ok());
    INFO("tokens=" << n_tokens << " isa=" << isa_name(isa));
    gate.y = g.data(), up.y = u.data();
    REQUIRE(matmul_id(gate, isa, pool, scratch).is_ok());
    REQUIRE(matmul_id(up, isa, pool, scratch).is_ok());
    gate.y = fg.data(), up.y = fu.data();
    REQUIRE(matmul_id_gate_up(gate, up, Glu{glu_formula, h.data()}, isa, pool, scratch).is_ok());
    CHECK(fg == g);
    CHECK(fu == u);
    check_close(fg, ref_g);
    check_close(fu, ref_u);
    glu_formula(g.data(), u.data(), want_h.data(), static_cast<int64_t>(n_out));
    CHECK(h == want_h);
  }
  MatmulIdArgs gate{wg.data(), StorageType::Q4_K, k, rows, n_experts, nullptr, 1, {}, n_used, 1, nullptr};
  MatmulIdArgs up = gate;
  up.w_type = StorageType::F16;
  CHECK(matmul_id_gate_up(gate, up, Glu{}, Isa::scalar, pool, scratch).message() ==
        "cpu: matmul_id_gate_up: Q4_K and F16 weights convert activations differently; run two matmul_ids");
}

TEMPLATE_TEST_CASE("matmul_gate_up equals two matmuls bit for bit, for one and many activation rows", "[cpu]", SY_ISA_SETS) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  const int64_t k = 512, rows = 70;
  std::mt19937 rng(13);
  std::normal_distribution<float> nd(0.f, 1.f);
  ThreadPool pool(3);
  const auto wg = random_matrix(StorageType::Q8_0, k, rows, rng);
  const auto wu = random_matrix(StorageType::Q4_0, k, rows, rng);
  for (int64_t m : {int64_t{1}, int64_t{37}}) {
    std::vector<float> x(static_cast<size_t>(k * m));
    for (auto& v : x) v = nd(rng);
    const size_t n_out = static_cast<size_t>(rows * m);
    std::vector<float> ref_g(n_out), ref_u(n_out), g(n_out), u(n_out), fg(n_out), fu(n_out), h(n_out), want_h(n_out);
    MatmulArgs gate{wg.data(), StorageType::Q8_0, k, rows, x.data(), m, ref_g.data()};
    MatmulArgs up{wu.data(), StorageType::Q4_0, k, rows, x.data(), m, ref_u.data()};
    REQUIRE(matmul_reference(gate).is_ok());
    REQUIRE(matmul_reference(up).is_ok());
    INFO("m=" << m << " isa=" << isa_name(isa));
    std::vector<uint8_t> scratch(matmul_scratch_bytes(StorageType::Q8_0, k, m, isa));
    gate.y = g.data(), up.y = u.data();
    REQUIRE(matmul(gate, isa, pool, scratch.data()).is_ok());
    REQUIRE(matmul(up, isa, pool, scratch.data()).is_ok());
    gate.y = fg.data(), up.y = fu.data();
    REQUIRE(matmul_gate_up(gate, up, Glu{glu_formula, h.data()}, isa, pool, scratch.data()).is_ok());
    CHECK(fg == g);
    CHECK(fu == u);
    check_close(fg, ref_g);
    check_close(fu, ref_u);
    glu_formula(g.data(), u.data(), want_h.data(), static_cast<int64_t>(n_out));
    CHECK(h == want_h);
  }
}

TEST_CASE("thread pool: thousands of tiny regions back to back, and again after the workers fell asleep", "[cpu]") {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  // Rounds 1 and 3 inside a Hot scope (the long spin, nested), with serial gaps between the
  // regions of round 3 that outlast the long spin too.
  for (int round = 0; round < 4; ++round) {
    std::optional<ThreadPool::Hot> hot, nested;
    if (round % 2 == 1) hot.emplace(pool), nested.emplace(pool);
    for (int r = 0; r < 2000; ++r) {
      pool.run(2 + r % 5, [&](int64_t t, int) { sum.fetch_add(t + 1); });
      if (round == 3 && r % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Longer than the workers spin, so the next regions start from blocked workers.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int64_t want = 0;
  for (int r = 0; r < 2000; ++r) {
    const int64_t n = 2 + r % 5;
    want += n * (n + 1) / 2;
  }
  CHECK(sum.load() == 4 * want);
}

#include "executor.hpp"
#include "switchyard/graph.hpp"

namespace {

GraphTensor host_tensor(StorageType type, void* data, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1) {
  GraphTensor t;
  t.type = type;
  t.data = data;
  t.ne[0] = ne0, t.ne[1] = ne1, t.ne[2] = ne2;
  t.nb[0] = static_cast<int64_t>(storage_type_info(type).block_bytes);
  t.nb[1] = static_cast<int64_t>(*storage_row_bytes(type, static_cast<uint64_t>(ne0)));
  t.nb[2] = t.nb[1] * ne1;
  t.nb[3] = t.nb[2] * ne2;
  return t;
}

GraphNode op_node(OpKind op, int32_t dst, std::initializer_list<int32_t> src) {
  GraphNode n;
  n.op = op;
  n.dst = dst;
  int i = 0;
  for (int32_t s : src) n.src[i++] = s;
  return n;
}

// The same graph node by node (one node per run, so no peephole can apply).
void run_unfused(Executor& ex, std::span<const GraphTensor> tensors, std::span<const GraphNode> nodes) {
  for (const auto& n : nodes) REQUIRE(ex.run(SubGraph{tensors, {&n, 1}, 0}).is_ok());
}

}  // namespace

TEST_CASE("executor: a fused MoE gate/up/SwiGLU gives the unfused graph's results bit for bit", "[cpu]") {
  const int64_t embd = 256, ff = 40, n_experts = 12, n_used = 4;
  std::mt19937 rng(14);
  std::normal_distribution<float> nd(0.f, 1.f);
  const auto wg = random_matrix(StorageType::Q4_K, embd, ff * n_experts, rng);
  const auto wu = random_matrix(StorageType::Q4_K, embd, ff * n_experts, rng);
  ThreadPool pool(3);
  for (int64_t n : {int64_t{1}, int64_t{37}}) {
    for (bool up_first : {false, true}) {
      for (bool in_place : {false, true}) {
        INFO("tokens=" << n << " up_first=" << up_first << " in_place=" << in_place);
        auto ids = routing(n_experts, n_used, n, rng);
        std::vector<float> x(static_cast<size_t>(embd * n));
        for (auto& v : x) v = nd(rng);
        const size_t n_h = static_cast<size_t>(ff * n_used * n);
        // Two copies of every output: [0] for the fused run, [1] for the unfused one.
        std::vector<float> gate[2], up[2], h[2], y[2];
        for (int c = 0; c < 2; ++c) {
          gate[c].assign(n_h, -1.f), up[c].assign(n_h, -2.f), h[c].assign(n_h, -3.f);
          y[c].assign(static_cast<size_t>(embd * n_used * n), -4.f);
        }
        for (int c = 0; c < 2; ++c) {
          std::vector<GraphTensor> t = {
              host_tensor(StorageType::Q4_K, const_cast<uint8_t*>(wg.data()), embd, ff, n_experts),
              host_tensor(StorageType::Q4_K, const_cast<uint8_t*>(wu.data()), embd, ff, n_experts),
              host_tensor(StorageType::F32, x.data(), embd, 1, n),
              host_tensor(StorageType::I32, ids.data(), n_used, n),
              host_tensor(StorageType::F32, gate[c].data(), ff, n_used, n),
              host_tensor(StorageType::F32, up[c].data(), ff, n_used, n),
              host_tensor(StorageType::F32, in_place ? gate[c].data() : h[c].data(), ff, n_used, n)};
          const GraphNode g_node = op_node(OpKind::matmul_id, 4, {0, 2, 3});
          const GraphNode u_node = op_node(OpKind::matmul_id, 5, {1, 2, 3});
          const std::vector<GraphNode> nodes = {up_first ? u_node : g_node, up_first ? g_node : u_node,
                                                op_node(OpKind::swiglu, 6, {4, 5})};
          Executor ex(detect_isa(), pool);
          if (c == 0)
            REQUIRE(ex.run(SubGraph{t, nodes, 0}).is_ok());
          else
            run_unfused(ex, t, nodes);
        }
        CHECK(up[0] == up[1]);
        CHECK(gate[0] == gate[1]);
        CHECK(h[0] == h[1]);
        CHECK(std::none_of(up[0].begin(), up[0].end(), [](float v) { return v == -2.f; }));
      }
    }
  }
}

TEST_CASE("executor: dense gate/up pairs fuse with and without a SwiGLU, and a partial overlap is left alone", "[cpu]") {
  const int64_t k = 256, rows = 96;
  std::mt19937 rng(15);
  std::normal_distribution<float> nd(0.f, 1.f);
  const auto wg = random_matrix(StorageType::Q8_0, k, rows, rng);
  const auto wu = random_matrix(StorageType::Q8_0, k, rows, rng);
  ThreadPool pool(2);
  for (int64_t m : {int64_t{1}, int64_t{37}}) {
    // Case 0: gate, up, swiglu. Case 1: gate, up, and a node that is not their SwiGLU.
    // Case 2: the SwiGLU writes half a row past the gate's start (fused would read clobbered
    // values; the peephole must decline and the node-by-node result must come out).
    for (int variant = 0; variant < 3; ++variant) {
      INFO("m=" << m << " variant=" << variant);
      std::vector<float> x(static_cast<size_t>(k * m));
      for (auto& v : x) v = nd(rng);
      const size_t n_out = static_cast<size_t>(rows * m);
      std::vector<float> buf[2];  // gate | up | h | spare, per run
      for (auto& b : buf) b.assign(4 * n_out + static_cast<size_t>(rows), 0.f);
      for (int c = 0; c < 2; ++c) {
        float* base = buf[c].data();
        float* h = variant == 2 ? base + rows / 2 : base + 2 * n_out;
        std::vector<GraphTensor> t = {host_tensor(StorageType::Q8_0, const_cast<uint8_t*>(wg.data()), k, rows),
                                      host_tensor(StorageType::Q8_0, const_cast<uint8_t*>(wu.data()), k, rows),
                                      host_tensor(StorageType::F32, x.data(), k, m),
                                      host_tensor(StorageType::F32, base, rows, m),
                                      host_tensor(StorageType::F32, base + n_out, rows, m),
                                      host_tensor(StorageType::F32, h, rows, m)};
        const std::vector<GraphNode> nodes = {
            op_node(OpKind::matmul, 3, {0, 2}), op_node(OpKind::matmul, 4, {1, 2}),
            variant == 1 ? op_node(OpKind::add, 5, {3, 4}) : op_node(OpKind::swiglu, 5, {3, 4})};
        Executor ex(detect_isa(), pool);
        if (c == 0)
          REQUIRE(ex.run(SubGraph{t, nodes, 0}).is_ok());
        else
          run_unfused(ex, t, nodes);
      }
      CHECK(buf[0] == buf[1]);
    }
  }
}
