// The serving layer on the project's demo models (no shared data needed): the transactional
// KV cache (truncate, attach, copy on write, all-or-nothing batches), the prefix cache, and
// the continuous-batching scheduler, whose greedy outputs must equal one sequence decoded
// alone, one token per step (test::greedy: the engine without the serving layer).
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>

#include "engine_support.hpp"
#include "serving/metrics.hpp"
#include "serving/prefill_budget.hpp"
#include "serving/prefix_cache.hpp"
#include "serving/scheduler.hpp"
#include "support.hpp"
#include "synth/synth.hpp"

using namespace sy;
namespace fs = std::filesystem;

namespace {

fs::path demo_model(const test::TempDir& dir, const std::string& arch) {
  const fs::path p = dir / (arch + ".gguf");
  if (!fs::exists(p)) REQUIRE(synth::write_demo_model(p, arch == "llama" ? "demo-llama" : "demo").is_ok());
  return p;
}

std::vector<int32_t> prompt_of(size_t n, int salt = 0) {
  std::vector<int32_t> p{1};
  for (size_t i = 1; i < n; ++i) p.push_back(static_cast<int32_t>((i * 97 + 13 + static_cast<size_t>(salt) * 31) % 511 + 1));
  return p;
}

// Collects one request's events; wait() blocks until its done or error event.
struct Outcome {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int32_t> ids;
  std::string reason;
  serving::Usage usage;
  Status error = Status::ok();
  bool ended = false;
  int text_events = 0;

  void wait() {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return ended; });
  }
};

std::shared_ptr<serving::Request> request(const std::vector<int32_t>& prompt, int64_t max_tokens, Outcome& o) {
  auto r = std::make_shared<serving::Request>();
  r->prompt = prompt;
  r->params.max_tokens = max_tokens;
  r->params.ignore_eos = true;
  pipeline::ComponentConfig greedy;
  greedy.name = "greedy";
  r->params.sampling = {greedy};
  r->sink = [&o](serving::Event&& e) {
    std::lock_guard lk(o.mu);
    if (e.kind == serving::Event::Kind::text) {
      o.ids.insert(o.ids.end(), e.tokens.begin(), e.tokens.end());
      ++o.text_events;
      return;
    }
    o.reason = e.finish_reason;
    o.usage = e.usage;
    if (e.kind == serving::Event::Kind::error) o.error = e.error;
    o.ended = true;
    o.cv.notify_all();
  };
  return r;
}

}  // namespace

TEST_CASE("KV cache: truncate frees blocks, attach shares them, a shared partial block is copied before a write",
          "[serving]") {
  test::TempDir dir;
  auto rt = test::bring_up_model(demo_model(dir, "llama"), {"f16", 128, 2, 512});
  auto& kv = rt->engine->kv();
  const int64_t free0 = kv.free_blocks();
  REQUIRE(kv.add(0).is_ok());
  std::vector<int32_t> cells(100);
  REQUIRE(kv.extend(0, 70, cells.data()).is_ok());  // blocks of 32: two full, one partial
  CHECK(kv.free_blocks() == free0 - 3);
  REQUIRE(kv.truncate(0, 40).is_ok());
  CHECK(kv.length(0) == 40);
  CHECK(kv.free_blocks() == free0 - 2);
  CHECK(kv.truncate(0, 41).code() == StatusCode::out_of_range);

  // A second sequence starts from the first one's full block.
  const auto b0 = kv.blocks(0);
  REQUIRE(b0.size() == 2);
  const std::vector<int32_t> first{b0[0]};
  REQUIRE(kv.add(1).is_ok());
  REQUIRE(kv.attach(1, first).is_ok());
  CHECK(kv.length(1) == 32);
  CHECK(kv.refs(first[0]) == 2);
  CHECK(kv.attach(1, first).code() == StatusCode::invalid_argument);  // not empty any more

  // Sequence 0's partial block, held by someone else too, is copied on its next write.
  const int32_t partial = kv.blocks(0)[1];
  kv.retain(partial);
  REQUIRE(kv.extend(0, 1, cells.data()).is_ok());
  CHECK(kv.blocks(0)[1] != partial);
  CHECK(kv.refs(partial) == 1);
  CHECK(cells[0] == kv.blocks(0)[1] * 32 + 8);  // position 40 lands in the copy
  kv.release(partial);
  REQUIRE(kv.remove(0).is_ok());
  REQUIRE(kv.remove(1).is_ok());
  CHECK(kv.free_blocks() == free0);
}

TEST_CASE("engine: a batch that does not fit changes no sequence", "[serving]") {
  test::TempDir dir;
  // A pool of 4 blocks of 32 positions shared by 2 sequences.
  auto rt = test::bring_up_model(demo_model(dir, "llama"), {"f32", 128, 2, 512, false, 128});
  auto& e = *rt->engine;
  REQUIRE(e.kv().free_blocks() == 4);
  REQUIRE(e.kv().add(0).is_ok());
  REQUIRE(e.kv().add(1).is_ok());
  std::vector<float> l;
  std::vector<engine::BatchToken> batch;
  for (int32_t t : prompt_of(40)) batch.push_back({0, t, false});
  REQUIRE(e.decode(batch, l).is_ok());  // 2 blocks
  batch.clear();
  for (int32_t t : prompt_of(20)) batch.push_back({0, t, false});  // fits: the third block
  for (int32_t t : prompt_of(70)) batch.push_back({1, t, true});   // needs three more
  const auto st = e.decode(batch, l);
  CHECK(st.code() == StatusCode::exhausted);
  CHECK(e.kv().length(0) == 40);
  CHECK(e.kv().length(1) == 0);
  CHECK(e.kv().free_blocks() == 2);
}

TEST_CASE("prefix cache: the longest cached block-aligned prefix, evicted least recently used", "[serving]") {
  test::TempDir dir;
  auto rt = test::bring_up_model(demo_model(dir, "llama"), {"f16", 256, 2, 512});
  auto& kv = rt->engine->kv();
  serving::PrefixCache cache(kv, 0);
  const auto a = prompt_of(100);
  std::vector<int32_t> cells(100);
  REQUIRE(kv.add(0).is_ok());
  REQUIRE(kv.extend(0, 100, cells.data()).is_ok());
  cache.insert(a, kv.blocks(0), 100);
  CHECK(cache.cached_blocks() == 3);  // 100 positions: 3 full blocks
  const std::vector<int32_t> blocks(kv.blocks(0).begin(), kv.blocks(0).end());
  REQUIRE(kv.remove(0).is_ok());
  CHECK(cache.evictable() == 3);

  // Same first 70 tokens: two blocks match; at most 63 positions asked: one.
  auto b = a;
  b[70] += 1;
  auto m = cache.lookup(b, static_cast<int64_t>(b.size()) - 1);
  CHECK(m.blocks == std::vector<int32_t>{blocks[0], blocks[1]});
  CHECK(cache.lookup(b, 63).blocks.size() == 1);
  // A different first token: nothing.
  auto c = a;
  c[0] = 2;
  CHECK(cache.lookup(c, 99).blocks.empty());

  // Making room frees the deepest blocks first.
  const int64_t free_before = kv.free_blocks();
  CHECK(cache.make_room(free_before + 1) == free_before + 1);
  CHECK(cache.lookup(a, 99).blocks.size() == 2);
  cache.clear();
  CHECK(kv.free_blocks() == free_before + 3);
}

TEST_CASE("scheduler: concurrent greedy requests equal each decoded alone", "[serving]") {
  test::TempDir dir;
  // With a step-time bound too small to meet, every prompt chunk beside a stream is the
  // 32-token floor (serving/prefill_budget.hpp): more, smaller chunks, the same tokens.
  for (const char* arch : {"llama", "qwen35moe"})
  for (const double max_step_s : {0.0, 1e-9}) {
    DYNAMIC_SECTION(arch << ", max_step_s " << max_step_s) {
      // Prompts of several lengths; two share a 64-token prefix (prefix cache), and the step
      // budget of 48 tokens splits the long prompts over several steps (chunked prefill).
      const auto shared = prompt_of(64, 3);
      auto with_tail = [&](std::vector<int32_t> p, int n, int salt) {
        for (int i = 0; i < n; ++i) p.push_back((i * 7 + salt) % 500 + 3);
        return p;
      };
      const std::vector<std::vector<int32_t>> prompts{prompt_of(5, 1),       prompt_of(70, 2),
                                                      with_tail(shared, 9, 1), with_tail(shared, 20, 2),
                                                      prompt_of(33, 4),      prompt_of(1, 5)};
      const std::vector<int64_t> lengths{12, 9, 15, 10, 20, 7};
      auto ref_rt = test::bring_up_model(demo_model(dir, arch), {"f32", 256, 1, 512});
      std::vector<std::vector<int32_t>> expected;
      for (size_t i = 0; i < prompts.size(); ++i) {
        expected.push_back(test::greedy(*ref_rt->engine, 0, prompts[i], lengths[i]));
        REQUIRE(ref_rt->engine->kv().remove(0).is_ok());
      }

      test::EngineOptions eo{"f32", 256, 4, 512};
      eo.state_checkpoints = 8;
      auto rt = test::bring_up_model(demo_model(dir, arch), eo);
      serving::Metrics metrics;
      serving::SchedulerConfig cfg;
      cfg.slots = 4;
      cfg.batch_tokens = 48;
      cfg.checkpoint_interval = 32;
      cfg.max_step_s = max_step_s;
      serving::Scheduler sched(*rt->engine, rt->tokenizer.get(), *rt->registry, cfg, &metrics);
      std::vector<std::unique_ptr<Outcome>> out;
      // The first shared-prefix request runs alone first, so the second finds its blocks.
      out.push_back(std::make_unique<Outcome>());
      sched.start();
      REQUIRE(sched.submit(request(prompts[2], lengths[2], *out.back())).is_ok());
      out.back()->wait();
      for (size_t i = 0; i < prompts.size(); ++i) {
        if (i == 2) continue;
        out.push_back(std::make_unique<Outcome>());
        REQUIRE(sched.submit(request(prompts[i], lengths[i], *out.back())).is_ok());
      }
      for (auto& o : out) o->wait();
      sched.stop();
      size_t k = 0;
      for (size_t i : {2, 0, 1, 3, 4, 5}) {
        INFO("request " << i);
        CHECK(out[k]->error.is_ok());
        CHECK(out[k]->reason == "length");
        CHECK(out[k]->ids == expected[i]);
        CHECK(out[k]->usage.prompt_tokens == static_cast<int64_t>(prompts[i].size()));
        CHECK(out[k]->usage.completion_tokens == lengths[i]);
        ++k;
      }
      // Request 3 shares 64 tokens with request 2: two 32-token blocks came from the cache
      // (for the hybrid model, from the state checkpoint at 64).
      CHECK(out[3]->usage.cached_tokens == 64);
      CHECK_THAT(metrics.render(), Catch::Contains("switchyard_prefix_cache_hit_tokens_total 64"));
    }
  }
}

// The arithmetic of the step-time bound, on observations made up here (binary fractions, so
// the arithmetic is exact): a decode step of 1/8 s and 1/512 s per prompt token leave
// (3/8 - 1/8) * 512 = 128 prompt tokens in 3/8 s.
TEST_CASE("prefill budget: prompt tokens beside streams fit the step-time target", "[serving]") {
  serving::PrefillBudget b(0.375, 32);
  CHECK(b.cap(0, 2048) == 2048);  // nothing generates: nobody waits for the step
  CHECK(b.cap(8, 2048) == 32);    // streams wait, no rate known yet: the floor
  CHECK(b.cap(8, 20) == 20);      // never more than the token budget leaves
  b.observe(8, 0, 0.125);
  b.observe(8, 64, 0.125 + 64.0 / 512);
  CHECK(b.cap(8, 2048) == 128);
  CHECK(b.cap(8, 60) == 60);
  CHECK(b.cap(0, 2048) == 2048);
  // Estimates move a quarter of the way to each new step: a 3/8 s decode step takes the
  // decode estimate from 1/8 to 3/16, leaving (3/8 - 3/16) * 512 = 96.
  b.observe(8, 0, 0.375);
  CHECK(b.cap(8, 2048) == 96);
  // A decode step beyond the target leaves the floor.
  for (int i = 0; i < 20; ++i) b.observe(8, 0, 0.5);
  CHECK(b.cap(8, 2048) == 32);
  // No bound: the token budget alone.
  serving::PrefillBudget off(0, 32);
  off.observe(8, 64, 10.0);
  CHECK(off.cap(8, 2048) == 2048);
  // Nonsense observations (a clock step backwards) are ignored.
  serving::PrefillBudget c(0.375, 32);
  c.observe(4, 10, -1.0);
  CHECK(c.cap(4, 2048) == 32);
}

TEST_CASE("scheduler: a pool too small for every sequence preempts and recomputes, invisibly", "[serving]") {
  test::TempDir dir;
  for (const char* arch : {"llama", "qwen35moe"}) {
    DYNAMIC_SECTION(arch) {
      const std::vector<std::vector<int32_t>> prompts{prompt_of(40, 1), prompt_of(50, 2), prompt_of(45, 3)};
      const int64_t n = 60;  // each ends near 100 positions: 4 blocks, 12 in all
      auto ref_rt = test::bring_up_model(demo_model(dir, arch), {"f32", 256, 1, 512});
      std::vector<std::vector<int32_t>> expected;
      for (const auto& p : prompts) {
        expected.push_back(test::greedy(*ref_rt->engine, 0, p, n));
        REQUIRE(ref_rt->engine->kv().remove(0).is_ok());
      }
      // 8 blocks for 3 sequences.
      auto rt = test::bring_up_model(demo_model(dir, arch), {"f32", 256, 3, 512, false, 256});
      serving::Metrics metrics;
      serving::SchedulerConfig cfg;
      cfg.slots = 3;
      serving::Scheduler sched(*rt->engine, rt->tokenizer.get(), *rt->registry, cfg, &metrics);
      std::vector<std::unique_ptr<Outcome>> out;
      for (const auto& p : prompts) {
        out.push_back(std::make_unique<Outcome>());
        REQUIRE(sched.submit(request(p, n, *out.back())).is_ok());
      }
      sched.start();
      for (auto& o : out) o->wait();
      sched.stop();
      for (size_t i = 0; i < prompts.size(); ++i) {
        INFO("request " << i);
        CHECK(out[i]->error.is_ok());
        CHECK(out[i]->ids == expected[i]);
      }
      CHECK_THAT(metrics.render(), !Catch::Contains("switchyard_preemptions_total 0\n"));
    }
  }
}

TEST_CASE("scheduler: cancelling frees the sequence; refused requests queue nothing", "[serving]") {
  test::TempDir dir;
  auto rt = test::bring_up_model(demo_model(dir, "llama"), {"f32", 128, 2, 512});
  serving::SchedulerConfig cfg;
  cfg.slots = 2;
  cfg.max_waiting = 1;
  cfg.prefix_cache = false;
  serving::Scheduler sched(*rt->engine, rt->tokenizer.get(), *rt->registry, cfg);
  const int64_t free0 = rt->engine->kv().free_blocks();

  Outcome too_long;
  const auto st = sched.submit(request(prompt_of(128), 4, too_long));
  CHECK(st.code() == StatusCode::out_of_range);
  CHECK_THAT(st.message(), Catch::Contains("128 tokens") && Catch::Contains("context holds 128"));

  Outcome a, b;
  auto ra = request(prompt_of(10), -1, a);
  REQUIRE(sched.submit(ra).is_ok());
  CHECK(sched.submit(request(prompt_of(10), 4, b)).code() == StatusCode::exhausted);  // one may wait
  ra->cancel = true;
  sched.start();
  sched.notify();
  a.wait();
  CHECK(a.reason == "cancelled");
  sched.stop();
  CHECK(rt->engine->kv().free_blocks() == free0);
}
